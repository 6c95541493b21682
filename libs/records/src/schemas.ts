import { companyObject } from './objects/company.object.js';
import { personObject } from './objects/person.object.js';
import { querySchemaOf } from './objects/query-schema.js';

/** The list parameters' schemas of companies and people, from their declarations. */
export const companySchema = querySchemaOf(companyObject);
export const personSchema = querySchemaOf(personObject);
