import { companyObject } from './company.object.js';
import type { ObjectDeclaration, StandardField } from './declaration.js';
import { withLegacy } from './legacy-fields.js';
import { opportunityObject } from './opportunity.object.js';
import { personObject } from './person.object.js';

export * from './declaration.js';
export type { FieldDeclaration, TextField, EnumField, TimestampField, CompositeField } from './legacy-fields.js';
export * from './composites.js';

/** Every record object, in the order the API lists them. Adding an object: its declaration here, and its migration. */
export const OBJECTS: readonly ObjectDeclaration[] = [companyObject, personObject, opportunityObject].map(
  (o: ObjectDeclaration<StandardField>): ObjectDeclaration => ({ ...o, fields: o.fields.map((f) => withLegacy(o.typeName, f)) }),
);

/** The standard objects' plural names, which every workspace has (each workspace's own objects come from its metadata). */
export const CUSTOM_FIELD_OBJECTS: readonly string[] = OBJECTS.map((o) => o.plural);

export function objectNamed(plural: string): ObjectDeclaration {
  const found = OBJECTS.find((o) => o.plural === plural);
  if (!found) throw new Error(`no record object ${plural}`);
  return found;
}
export * from './custom-fields.js';
export * from './unique-fields.js';
export * from './custom-objects.js';
export * from './relations.js';
