import { Injectable } from '@nestjs/common';
import { assertCan, type Principal } from '../../../../libs/auth/src/principal.js';
import { companyDefinition, type CompanyRecord } from '../companies/company.definition.js';
import { RecordStore, type ListArgs, type ListResult } from '../records/record-store.js';
import { personDefinition, type PersonRecord } from './person.definition.js';

export type PersonWithCompany = PersonRecord & { company?: CompanyRecord | null };

@Injectable()
export class PeopleService {
  constructor(private readonly store: RecordStore) {}

  async list(principal: Principal, args: ListArgs, depth: 0 | 1 = 0): Promise<ListResult<PersonWithCompany>> {
    const result = await this.store.list(personDefinition, principal, args);
    return { ...result, records: await this.withCompany(principal, result.records, depth) };
  }

  async get(principal: Principal, id: string, depth: 0 | 1 = 0): Promise<PersonWithCompany> {
    const person = await this.store.get(personDefinition, principal, id);
    return (await this.withCompany(principal, [person], depth))[0];
  }

  create(principal: Principal, body: unknown): Promise<PersonRecord> {
    return this.store.create(personDefinition, principal, body);
  }

  createMany(principal: Principal, bodies: unknown, listName = ''): Promise<PersonRecord[]> {
    return this.store.createMany(personDefinition, principal, bodies, listName);
  }

  update(principal: Principal, id: string, body: unknown): Promise<PersonRecord> {
    return this.store.update(personDefinition, principal, id, body);
  }

  delete(principal: Principal, id: string): Promise<{ id: string }> {
    return this.store.softDelete(personDefinition, principal, id);
  }

  /** Live companies by id, in one query. */
  companiesByIds(principal: Principal, ids: string[]): Promise<CompanyRecord[]> {
    assertCan(principal, 'companies', 'read');
    return this.store.findByIds(companyDefinition, principal.workspaceId, ids);
  }

  private async withCompany(principal: Principal, people: PersonRecord[], depth: 0 | 1): Promise<PersonWithCompany[]> {
    if (depth === 0) return people;
    const ids = [...new Set(people.map((p) => p.companyId).filter((id): id is string => Boolean(id)))];
    const companies = new Map((await this.companiesByIds(principal, ids)).map((c) => [c.id, c]));
    return people.map((p) => ({ ...p, company: p.companyId ? (companies.get(p.companyId) ?? null) : null }));
  }
}
