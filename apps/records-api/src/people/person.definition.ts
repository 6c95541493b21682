import { personSchema } from '../../../../libs/records/src/schemas.js';
import { iso, type RecordDefinition } from '../records/record-definition.js';
import { PersonCreateInput, PersonUpdateInput } from './dto/person.input.js';

export interface PersonRecord {
  id: string;
  name: { firstName: string | null; lastName: string | null };
  emails: { primaryEmail: string | null; additionalEmails: string[] };
  companyId: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

export const personDefinition: RecordDefinition<PersonRecord, PersonCreateInput, PersonUpdateInput> = {
  object: 'people',
  singular: 'person',
  schema: personSchema,
  columns: ['id', 'first_name', 'last_name', 'primary_email', 'additional_emails', 'company_id', 'created_at', 'updated_at', 'deleted_at'],
  createInput: PersonCreateInput,
  updateInput: PersonUpdateInput,
  toRecord: (row) => ({
    id: row.id as string,
    name: { firstName: (row.first_name as string | null) ?? null, lastName: (row.last_name as string | null) ?? null },
    emails: {
      primaryEmail: (row.primary_email as string | null) ?? null,
      additionalEmails: (row.additional_emails as string[] | null) ?? [],
    },
    companyId: (row.company_id as string | null) ?? null,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
    deletedAt: iso(row.deleted_at),
  }),
  toColumns: (input: PersonCreateInput | PersonUpdateInput) => {
    const columns: Record<string, unknown> = {};
    if ('id' in input && input.id !== undefined) columns.id = input.id;
    if (input.name === null) Object.assign(columns, { first_name: null, last_name: null });
    else if (input.name) {
      if (input.name.firstName !== undefined) columns.first_name = input.name.firstName;
      if (input.name.lastName !== undefined) columns.last_name = input.name.lastName;
    }
    if (input.emails === null) Object.assign(columns, { primary_email: null, additional_emails: '[]' });
    else if (input.emails) {
      if (input.emails.primaryEmail !== undefined) columns.primary_email = input.emails.primaryEmail;
      if (input.emails.additionalEmails !== undefined) columns.additional_emails = JSON.stringify(input.emails.additionalEmails ?? []);
    }
    if (input.companyId !== undefined) columns.company_id = input.companyId;
    return columns;
  },
};
