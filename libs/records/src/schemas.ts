import type { FieldDef, ObjectSchema } from './query/types.js';

function field(path: string, column: string, type: FieldDef['type'], nullable = true, sortable = true): FieldDef {
  return { path, column, type, nullable, sortable };
}

const timestamps = [
  field('createdAt', 'created_at', 'timestamp', false),
  field('updatedAt', 'updated_at', 'timestamp', false),
  field('deletedAt', 'deleted_at', 'timestamp'),
];

function byPath(fields: FieldDef[]): Record<string, FieldDef> {
  return Object.fromEntries(fields.map((f) => [f.path, f]));
}

export const companySchema: ObjectSchema = {
  name: 'companies',
  table: 'companies',
  fields: byPath([
    field('id', 'id', 'uuid', false),
    field('name', 'name', 'text', false),
    field('domainName.primaryLinkUrl', 'domain_primary_link_url', 'text'),
    field('domainName.primaryLinkLabel', 'domain_primary_link_label', 'text'),
    ...timestamps,
  ]),
  compositeSort: { domainName: ['domainName.primaryLinkUrl'] },
};

export const personSchema: ObjectSchema = {
  name: 'people',
  table: 'people',
  fields: byPath([
    field('id', 'id', 'uuid', false),
    field('name.firstName', 'first_name', 'text'),
    field('name.lastName', 'last_name', 'text'),
    field('emails.primaryEmail', 'primary_email', 'text'),
    field('emails.additionalEmails', 'additional_emails', 'textArray', false, false),
    field('companyId', 'company_id', 'uuid'),
    ...timestamps,
  ]),
  compositeSort: { name: ['name.firstName', 'name.lastName'], emails: ['emails.primaryEmail'] },
};
