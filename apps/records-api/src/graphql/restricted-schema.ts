import { getNullableType, isObjectType, lexicographicSortSchema, type GraphQLSchema } from 'graphql';
import { fieldAccess } from '#auth/field-access.js';
import type { Principal } from '#auth/principal.js';
import { ForbiddenError } from '#errors/errors.js';
import { OBJECTS } from '#records/objects/index.js';
import type { GraphqlContext } from './graphql-context.js';

/*
 * The GraphQL schema of a role that cannot read some fields (docs/graphql.md, "Field
 * permissions"). Each such field stays in the schema (documents that select it stay valid),
 * becomes nullable, and resolves to a FORBIDDEN error at its own path: the answer keeps
 * everything else, with null there. Only roles with restrictions get one of these (made per
 * workspace model and restrictions, and kept, by WorkspaceGraphql); every other caller is
 * served by the shared schemas and the fast path, which never see this.
 */

/** `schema` for `principal`: a copy whose hidden fields are nullable and answer FORBIDDEN; `schema` itself when nothing is hidden. */
export function restrictedSchema(schema: GraphQLSchema, principal: Principal): GraphQLSchema {
  const hiddenOf = OBJECTS.map((o) => ({ o, hidden: fieldAccess(principal, o.plural)?.hidden })).filter((x) => x.hidden?.size);
  if (!hiddenOf.length) return schema;
  // A copy with every type made anew (the base is sorted already, so nothing moves but the
  // workspace's custom fields), whose fields can be changed without touching the shared schema.
  const copy = lexicographicSortSchema(schema);
  for (const { o, hidden } of hiddenOf) {
    const type = copy.getType(o.typeName);
    if (!isObjectType(type)) continue;
    const fields = type.getFields();
    for (const name of hidden!) {
      const field = fields[name];
      if (!field) continue;
      field.type = getNullableType(field.type);
      const what = `${o.plural}.${name}`;
      // The schema is shared by every role with the same restrictions: the message names the caller's.
      field.resolve = (_source, _args, context: GraphqlContext) => {
        throw new ForbiddenError(`The role "${context.principal.role.name}" does not allow read on ${what}`);
      };
    }
  }
  return copy;
}
