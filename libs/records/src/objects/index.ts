import { companyObject } from './company.object.js';
import type { ObjectDeclaration } from './declaration.js';
import { opportunityObject } from './opportunity.object.js';
import { personObject } from './person.object.js';

export * from './declaration.js';
export * from './composites.js';

/** Every record object, in the order the API lists them. Adding an object: its declaration here, and its migration. */
export const OBJECTS: readonly ObjectDeclaration[] = [companyObject, personObject, opportunityObject];

/** The standard objects' plural names, which every workspace has (each workspace's own objects come from its metadata). */
export const CUSTOM_FIELD_OBJECTS: readonly string[] = OBJECTS.map((o) => o.plural);

export function objectNamed(plural: string): ObjectDeclaration {
  const found = OBJECTS.find((o) => o.plural === plural);
  if (!found) throw new Error(`no record object ${plural}`);
  return found;
}
export * from './custom-fields.js';
export * from './custom-relations.js';
export * from './unique-fields.js';
export * from './custom-objects.js';
export * from './relations.js';
