import { companySchema } from '../../../../libs/records/src/schemas.js';
import { iso, type RecordDefinition } from '../records/record-definition.js';
import { CompanyCreateInput, CompanyUpdateInput, type LinkInput } from './dto/company.input.js';

export interface CompanyRecord {
  id: string;
  name: string;
  domainName: { primaryLinkUrl: string | null; primaryLinkLabel: string | null; secondaryLinks: { url: string; label: string | null }[] };
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

export const companyDefinition: RecordDefinition<CompanyRecord, CompanyCreateInput, CompanyUpdateInput> = {
  object: 'companies',
  singular: 'company',
  schema: companySchema,
  columns: ['id', 'name', 'domain_primary_link_url', 'domain_primary_link_label', 'domain_secondary_links', 'created_at', 'updated_at', 'deleted_at'],
  createInput: CompanyCreateInput,
  updateInput: CompanyUpdateInput,
  toRecord: (row) => ({
    id: row.id as string,
    name: row.name as string,
    domainName: {
      primaryLinkUrl: (row.domain_primary_link_url as string | null) ?? null,
      primaryLinkLabel: (row.domain_primary_link_label as string | null) ?? null,
      secondaryLinks: (row.domain_secondary_links as CompanyRecord['domainName']['secondaryLinks']) ?? [],
    },
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
    deletedAt: iso(row.deleted_at),
  }),
  toColumns: (input: CompanyCreateInput | CompanyUpdateInput) => {
    const columns: Record<string, unknown> = {};
    if ('id' in input && input.id !== undefined) columns.id = input.id;
    if (input.name !== undefined) columns.name = input.name;
    if (input.domainName === null) {
      Object.assign(columns, { domain_primary_link_url: null, domain_primary_link_label: null, domain_secondary_links: '[]' });
    } else if (input.domainName) {
      const d = input.domainName;
      if (d.primaryLinkUrl !== undefined) columns.domain_primary_link_url = d.primaryLinkUrl;
      if (d.primaryLinkLabel !== undefined) columns.domain_primary_link_label = d.primaryLinkLabel;
      if (d.secondaryLinks !== undefined) {
        const links = (d.secondaryLinks ?? []).map((l: LinkInput) => ({ url: l.url, label: l.label ?? null }));
        columns.domain_secondary_links = JSON.stringify(links);
      }
    }
    return columns;
  },
};
