import DataLoader from 'dataloader';
import type { Principal } from '../../../../libs/auth/src/principal.js';
import type { CompaniesService } from '../companies/companies.service.js';
import type { CompanyRecord } from '../companies/company.definition.js';
import type { PeopleService } from '../people/people.service.js';
import type { PersonRecord } from '../people/person.definition.js';

export interface PeopleOfCompany {
  /** The oldest live people of the company, at most EMBEDDED_PER_RECORD (60). */
  records: PersonRecord[];
  total: number;
}

export interface Loaders {
  peopleByCompany: DataLoader<string, PeopleOfCompany>;
  companyById: DataLoader<string, CompanyRecord | null>;
}

/**
 * Batches the relation fields of one request: every `Company.people` (or `Person.company`)
 * resolved in the same tick becomes one service call, so one SQL query. Made per request
 * (in the GraphQL context), so a cache never outlives the request or crosses principals.
 */
export function createLoaders(principal: Principal, companies: CompaniesService, people: PeopleService): Loaders {
  return {
    peopleByCompany: new DataLoader(async (ids: readonly string[]) => {
      const byCompany = await companies.peopleOf(principal, [...ids]);
      return ids.map((id) => byCompany.get(id) ?? { records: [], total: 0 });
    }),
    companyById: new DataLoader(async (ids: readonly string[]) => {
      const found = new Map((await people.companiesByIds(principal, [...ids])).map((c) => [c.id, c]));
      return ids.map((id) => found.get(id) ?? null);
    }),
  };
}
