import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { RecordAction, RecordObject } from '../../../../libs/database/src/entities/role.entity.js';
import type { Principal } from '../../../../libs/auth/src/principal.js';
import { companySchema, personSchema } from '../../../../libs/records/src/schemas.js';
import { EMBEDDED_PER_RECORD, type CompaniesService } from '../companies/companies.service.js';
import type { CompanyRecord } from '../companies/company.definition.js';
import type { PeopleService } from '../people/people.service.js';
import type { PersonRecord } from '../people/person.definition.js';
import { parseRestGetQuery, parseRestListQuery } from '../records/list-query.js';
import type { ListResult } from '../records/record-store.js';
import {
  companyCreateInput,
  companyOutput,
  companyUpdateInput,
  companyWithPeopleOutput,
  deleteInput,
  deletedOutput,
  getInput,
  listInput,
  listOutput,
  personCreateInput,
  personOutput,
  personUpdateInput,
  personWithCompanyOutput,
  recordOutput,
} from './tool-schemas.js';

/** What a tool hands back: the structured result and one line for people and models to read. */
export interface ToolOutcome {
  structured: Record<string, unknown>;
  summary: string;
}

/** One MCP tool: a thin call into the service layer, which checks the role and validates. */
export interface RecordTool {
  name: string;
  title: string;
  description: string;
  /** The permission the tool needs; tools the caller's role lacks are not listed. */
  object: RecordObject;
  action: RecordAction;
  inputSchema: z.ZodObject;
  outputSchema: z.ZodObject;
  annotations: ToolAnnotations;
  run(principal: Principal, args: Record<string, unknown>): Promise<ToolOutcome>;
}

/** Tool arguments as REST query parameters, so the REST parsers (and their messages) apply. */
function asQuery(args: Record<string, unknown>): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value !== undefined) query[key] = key === 'depth' ? String(value) : value;
  }
  return query;
}

function listSummary(page: ListResult<unknown>, plural: string): string {
  const shown = page.records.length;
  const more = page.pageInfo.hasNextPage ? ' More: pass pageInfo.endCursor as starting_after.' : '';
  return `${shown} of ${page.totalCount} ${plural}.${more}`;
}

const companyLabel = (c: CompanyRecord) => `company "${c.name}" (id ${c.id})`;
function personLabel(p: PersonRecord): string {
  const name = [p.name.firstName, p.name.lastName].filter(Boolean).join(' ');
  const shown = name || p.emails.primaryEmail;
  return shown ? `person "${shown}" (id ${p.id})` : `person ${p.id}`;
}

const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const CREATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
const UPDATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
const DELETE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

/** SPEC §7: five tools per object, over the same services as REST and GraphQL. */
export function recordTools(companies: CompaniesService, people: PeopleService): RecordTool[] {
  const companyPeople = `each company's people (its ${EMBEDDED_PER_RECORD} oldest)`;
  const personCompany = "each person's company";
  return [
    {
      name: 'list_companies',
      title: 'List companies',
      description:
        'Lists the companies of the workspace, a page at a time, with the REST list syntax: filter, order_by, limit, ' +
        'cursors (starting_after / ending_before) and depth. Returns the page, totalCount (matching the filter) and pageInfo.',
      object: 'companies',
      action: 'read',
      inputSchema: listInput(companySchema, companyPeople, {
        filter: [
          'name[ilike]:"%acme%"',
          'domainName.primaryLinkUrl[eq]:"acme.com"',
          'or(name[startsWith]:"A",createdAt[gte]:"2024-01-01")',
          'deletedAt[is]:NOT_NULL',
        ],
        orderBy: ['name[AscNullsFirst]', 'createdAt[DescNullsLast]', 'domainName[AscNullsLast],name'],
      }),
      outputSchema: listOutput('companies', companyWithPeopleOutput),
      annotations: { ...READ, title: 'List companies' },
      async run(principal, args) {
        const { depth, ...list } = parseRestListQuery(asQuery(args), companySchema);
        const page = await companies.list(principal, list, depth);
        return {
          structured: { companies: page.records, totalCount: page.totalCount, pageInfo: page.pageInfo },
          summary: listSummary(page, 'companies'),
        };
      },
    },
    {
      name: 'get_company',
      title: 'Get a company',
      description: 'Reads one company by id (with depth 1, also its people). A deleted or unknown id is NOT_FOUND.',
      object: 'companies',
      action: 'read',
      inputSchema: getInput('company', companyPeople),
      outputSchema: recordOutput('company', companyWithPeopleOutput),
      annotations: { ...READ, title: 'Get a company' },
      async run(principal, { id, ...query }) {
        const company = await companies.get(principal, String(id), parseRestGetQuery(asQuery(query)));
        return { structured: { company }, summary: `Found ${companyLabel(company)}.` };
      },
    },
    {
      name: 'create_company',
      title: 'Create a company',
      description: 'Creates a company. name is required; domainName.primaryLinkUrl takes a URL or a bare domain (acme.com).',
      object: 'companies',
      action: 'create',
      inputSchema: companyCreateInput,
      outputSchema: recordOutput('company', companyOutput),
      annotations: { ...CREATE, title: 'Create a company' },
      async run(principal, args) {
        const company = await companies.create(principal, args);
        return { structured: { company }, summary: `Created ${companyLabel(company)}.` };
      },
    },
    {
      name: 'update_company',
      title: 'Update a company',
      description: 'Changes the given fields of a company (partial update); fields left out keep their value.',
      object: 'companies',
      action: 'update',
      inputSchema: companyUpdateInput,
      outputSchema: recordOutput('company', companyOutput),
      annotations: { ...UPDATE, title: 'Update a company' },
      async run(principal, { id, ...changes }) {
        const company = await companies.update(principal, String(id), changes);
        return { structured: { company }, summary: `Updated ${companyLabel(company)}.` };
      },
    },
    {
      name: 'delete_company',
      title: 'Delete a company',
      description:
        'Deletes a company (soft delete: it disappears from lists and reads; list_companies with ' +
        'filter deletedAt[is]:NOT_NULL still shows it). Its people stay, still linked.',
      object: 'companies',
      action: 'delete',
      inputSchema: deleteInput('company'),
      outputSchema: deletedOutput,
      annotations: { ...DELETE, title: 'Delete a company' },
      async run(principal, { id }) {
        const deleted = await companies.delete(principal, String(id));
        return { structured: deleted, summary: `Deleted company ${deleted.id}.` };
      },
    },
    {
      name: 'list_people',
      title: 'List people',
      description:
        'Lists the people of the workspace, a page at a time, with the REST list syntax: filter, order_by, limit, ' +
        'cursors (starting_after / ending_before) and depth. Returns the page, totalCount (matching the filter) and pageInfo.',
      object: 'people',
      action: 'read',
      inputSchema: listInput(personSchema, personCompany, {
        filter: [
          'emails.primaryEmail[eq]:"ada@acme.com"',
          'name.lastName[ilike]:"%son"',
          'companyId[eq]:"0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10"',
          'and(companyId[is]:NOT_NULL,not(emails.primaryEmail[endsWith]:"@gmail.com"))',
        ],
        orderBy: ['name[AscNullsFirst]', 'name.lastName[AscNullsLast],createdAt[DescNullsLast]', 'emails.primaryEmail'],
      }),
      outputSchema: listOutput('people', personWithCompanyOutput),
      annotations: { ...READ, title: 'List people' },
      async run(principal, args) {
        const { depth, ...list } = parseRestListQuery(asQuery(args), personSchema);
        const page = await people.list(principal, list, depth);
        return {
          structured: { people: page.records, totalCount: page.totalCount, pageInfo: page.pageInfo },
          summary: listSummary(page, 'people'),
        };
      },
    },
    {
      name: 'get_person',
      title: 'Get a person',
      description: 'Reads one person by id (with depth 1, also their company). A deleted or unknown id is NOT_FOUND.',
      object: 'people',
      action: 'read',
      inputSchema: getInput('person', personCompany),
      outputSchema: recordOutput('person', personWithCompanyOutput),
      annotations: { ...READ, title: 'Get a person' },
      async run(principal, { id, ...query }) {
        const person = await people.get(principal, String(id), parseRestGetQuery(asQuery(query)));
        return { structured: { person }, summary: `Found ${personLabel(person)}.` };
      },
    },
    {
      name: 'create_person',
      title: 'Create a person',
      description:
        'Creates a person. Every field is optional; emails.primaryEmail must be an e-mail address; ' +
        'companyId links a company of this workspace (find it with list_companies).',
      object: 'people',
      action: 'create',
      inputSchema: personCreateInput,
      outputSchema: recordOutput('person', personOutput),
      annotations: { ...CREATE, title: 'Create a person' },
      async run(principal, args) {
        const person = await people.create(principal, args);
        return { structured: { person }, summary: `Created ${personLabel(person)}.` };
      },
    },
    {
      name: 'update_person',
      title: 'Update a person',
      description: 'Changes the given fields of a person (partial update); fields left out keep their value; companyId null unlinks.',
      object: 'people',
      action: 'update',
      inputSchema: personUpdateInput,
      outputSchema: recordOutput('person', personOutput),
      annotations: { ...UPDATE, title: 'Update a person' },
      async run(principal, { id, ...changes }) {
        const person = await people.update(principal, String(id), changes);
        return { structured: { person }, summary: `Updated ${personLabel(person)}.` };
      },
    },
    {
      name: 'delete_person',
      title: 'Delete a person',
      description:
        'Deletes a person (soft delete: they disappear from lists and reads; list_people with ' +
        'filter deletedAt[is]:NOT_NULL still shows them).',
      object: 'people',
      action: 'delete',
      inputSchema: deleteInput('person'),
      outputSchema: deletedOutput,
      annotations: { ...DELETE, title: 'Delete a person' },
      async run(principal, { id }) {
        const deleted = await people.delete(principal, String(id));
        return { structured: deleted, summary: `Deleted person ${deleted.id}.` };
      },
    },
  ];
}
