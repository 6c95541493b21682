import { defaultFieldResolver, getNullableType, type GraphQLSchema } from 'graphql';
import { fieldAccess } from '#auth/field-access.js';
import { ForbiddenError } from '#errors/errors.js';
import { restrictableBuiltins } from '#identity/roles.js';
import { OBJECTS } from '#records/objects/index.js';
import type { WorkspaceModel } from '#records/service/data-model.js';
import type { GraphqlContext } from './graphql-context.js';
import { customObjectTypes } from './custom-object-schema.js';
import { copySchema } from './schema-copy.js';

/*
 * The GraphQL schema of roles that cannot read some fields (docs/graphql.md, "Field
 * permissions"): one per workspace schema, shared by every restricted role of every
 * workspace with that schema (docs/decisions/0052-graphql-schemas-bounded-in-bytes.md).
 * Every field a role may restrict (decision 39) stays in the schema, so documents that
 * select it stay valid for every role; it is nullable, and resolves to a FORBIDDEN error at
 * its own path when the caller's role hides it, so the rest of the answer stands (a custom
 * object's fields are all custom, so all restrictable). The
 * check is per request, against the caller's role: a schema per set of restrictions would
 * let 48 roles make 48 schemas. Roles without restrictions never get this schema; they are
 * served by the workspace's own schema and the fast path.
 */

const OBJECT_OF_TYPE = new Map(OBJECTS.map((o) => [o.typeName, o.plural]));

export function guardedSchema(schema: GraphQLSchema, model: WorkspaceModel): GraphQLSchema {
  const objectOfType = new Map([...OBJECT_OF_TYPE, ...customObjectTypes(model)]);
  const restrictable = new Map(
    [...objectOfType].map(([typeName, plural]) => [
      typeName,
      new Set([...restrictableBuiltins(plural), ...model.active(plural).map((f) => f.name)]),
    ]),
  );
  return copySchema(
    schema,
    (typeName, name, field) => {
      const object = objectOfType.get(typeName);
      if (!object || !restrictable.get(typeName)!.has(name)) return field;
      const resolve = field.resolve ?? defaultFieldResolver;
      const what = `${object}.${name}`;
      return {
        ...field,
        type: getNullableType(field.type),
        resolve: (source, args, context, info) => {
          const { principal } = context as GraphqlContext;
          if (fieldAccess(principal, object)?.hidden.has(name)) {
            throw new ForbiddenError(`The role "${principal.role.name}" does not allow read on ${what}`);
          }
          return resolve(source, args, context, info);
        },
      };
      // Only output fields change: the inputs and enums stay the workspace schema's own.
    },
    { outputsOnly: true },
  );
}
