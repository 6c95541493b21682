import { topField } from '#auth/field-access.js';
import type { ObjectSchema } from '../query/types.js';

/**
 * An object's query schema without the leaves of the fields a role cannot read
 * (docs/authentication.md "Field permissions"): what its list parameters and tools offer it.
 */
export function visibleSchema(schema: ObjectSchema, hidden: ReadonlySet<string> | undefined): ObjectSchema {
  if (!hidden?.size) return schema;
  return {
    ...schema,
    fields: Object.fromEntries(Object.entries(schema.fields).filter(([path]) => !hidden.has(topField(path)))),
    compositeSort: Object.fromEntries(Object.entries(schema.compositeSort).filter(([name]) => !hidden.has(name))),
  };
}
