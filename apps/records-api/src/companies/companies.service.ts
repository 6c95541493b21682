import { Injectable } from '@nestjs/common';
import { assertCan, type Principal } from '../../../../libs/auth/src/principal.js';
import { personDefinition, type PersonRecord } from '../people/person.definition.js';
import { RecordStore, type ListArgs, type ListResult } from '../records/record-store.js';
import { companyDefinition, type CompanyRecord } from './company.definition.js';

export const EMBEDDED_PER_RECORD = 60;
export type CompanyWithPeople = CompanyRecord & { people?: PersonRecord[] };

@Injectable()
export class CompaniesService {
  constructor(private readonly store: RecordStore) {}

  async list(principal: Principal, args: ListArgs, depth: 0 | 1 = 0): Promise<ListResult<CompanyWithPeople>> {
    const result = await this.store.list(companyDefinition, principal, args);
    return { ...result, records: await this.withPeople(principal, result.records, depth) };
  }

  async get(principal: Principal, id: string, depth: 0 | 1 = 0): Promise<CompanyWithPeople> {
    const company = await this.store.get(companyDefinition, principal, id);
    return (await this.withPeople(principal, [company], depth))[0];
  }

  create(principal: Principal, body: unknown): Promise<CompanyRecord> {
    return this.store.create(companyDefinition, principal, body);
  }

  createMany(principal: Principal, bodies: unknown, listName = ''): Promise<CompanyRecord[]> {
    return this.store.createMany(companyDefinition, principal, bodies, listName);
  }

  update(principal: Principal, id: string, body: unknown): Promise<CompanyRecord> {
    return this.store.update(companyDefinition, principal, id, body);
  }

  delete(principal: Principal, id: string): Promise<{ id: string }> {
    return this.store.softDelete(companyDefinition, principal, id);
  }

  /** Up to 60 live people per company, for many companies in one query. */
  peopleOf(principal: Principal, companyIds: string[]) {
    assertCan(principal, 'people', 'read');
    return this.store.findByParent(personDefinition, principal.workspaceId, 'company_id', companyIds, EMBEDDED_PER_RECORD);
  }

  private async withPeople(principal: Principal, companies: CompanyRecord[], depth: 0 | 1): Promise<CompanyWithPeople[]> {
    if (depth === 0) return companies;
    const people = await this.peopleOf(principal, companies.map((c) => c.id));
    return companies.map((c) => ({ ...c, people: people.get(c.id)?.records ?? [] }));
  }
}
