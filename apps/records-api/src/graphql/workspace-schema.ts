import { extendSchema, parse, type GraphQLSchema } from 'graphql';
import { fieldType } from '#records/field-types/index.js';
import { OBJECTS } from '#records/objects/index.js';
import type { WorkspaceModel } from '#records/service/data-model.js';
import { customObjectResolvers, customObjectsSdl } from './custom-object-schema.js';
import { relationResolvers, relationsSdl } from './relation-schema.js';
import { copySchema } from './schema-copy.js';

/*
 * A workspace's GraphQL schema (docs/data-model.md): the base schema (apps/records-api/schema.gql,
 * unchanged) extended with that workspace's active custom fields — on the object type and
 * on its create, update, filter and order inputs, typed as each field's type gives them
 * (with the definitions they need: a select's enum, the Phones and Address types) — and its
 * custom objects (custom-object-schema.ts). `extendSchema` keeps every resolver of the base
 * schema; a custom field resolves as the record's own property.
 */

const doc = (text: string | null | undefined) => (text ? `${JSON.stringify(text)} ` : '');

/** Type definitions the base schema has already: the composites of the standard objects' fields (graphql-types.ts builds them). */
const IN_BASE = new Set(OBJECTS.flatMap((o) => o.fields.flatMap((f) => fieldType(f.type).composite?.graphql.object ?? [])));

/** The SDL that extends the base schema with a workspace's active custom fields; empty when there are none. */
export function workspaceSchemaSdl(model: WorkspaceModel): string {
  const definitions = new Map<string, string>();
  const extensions: string[] = [];
  for (const object of OBJECTS) {
    const fields = model.active(object.plural);
    if (!fields.length) continue;
    const mapped = fields.map((field) => {
      const types = fieldType(field.type).graphql(field, object.typeName);
      for (const [name, sdl] of Object.entries(types.sdl ?? {})) if (!IN_BASE.has(name)) definitions.set(name, sdl);
      return { field, ...types };
    });
    const line = (name: string, type: string, text?: string | null) => `${doc(text)}${name}: ${type}`;
    extensions.push(
      `extend type ${object.typeName} { ${mapped.map((m) => line(m.field.name, m.output, m.field.description ?? m.field.label)).join(' ')} }`,
      `extend input ${object.typeName}CreateInput { ${mapped.map((m) => line(m.field.name, m.input, m.field.description)).join(' ')} }`,
      `extend input ${object.typeName}UpdateInput { ${mapped.map((m) => line(m.field.name, m.input, m.field.description)).join(' ')} }`,
      `extend input ${object.typeName}FilterInput { ${mapped.map((m) => line(m.field.name, m.filter)).join(' ')} }`,
    );
    const ordered = mapped.filter((m) => m.order);
    if (ordered.length)
      extensions.push(`extend input ${object.typeName}OrderByInput { ${ordered.map((m) => line(m.field.name, m.order!)).join(' ')} }`);
  }
  // A workspace's own objects: a field's own definitions (its enum) go with it, shared ones (Phones, Address) once.
  extensions.push(
    ...customObjectsSdl(model, [...definitions.values()], (typeName, field, made) => {
      const types = fieldType(field.type).graphql(field, typeName);
      for (const [name, sdl] of Object.entries(types.sdl ?? {})) {
        if (name.startsWith(typeName)) made.push(sdl);
        else if (!IN_BASE.has(name)) definitions.set(name, sdl);
      }
      return types;
    }),
  );
  // Custom relations, once every type they extend is in the document (relation-schema.ts).
  extensions.push(...relationsSdl(model));
  if (!extensions.length) return '';
  return [...definitions.values(), ...extensions].join('\n');
}

/** A turn of the event loop between two steps of a build: what waits for the loop (other tenants' requests) runs in between. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The base schema with a workspace's custom fields and objects, or the base schema itself
 * when it has none; copied without the syntax trees `extendSchema` leaves behind
 * (schema-copy.ts), with the custom objects' resolvers attached on the way. Its four
 * steps (SDL, parse, extend, copy) run in turns of their own: the largest model the limits
 * allow (50 custom objects of 100 fields) took 0.2–0.35 s in one piece here, its longest
 * step (extend) 0.08–0.14 s (`npm run bench -- --graphql-schema-size`).
 */
export async function workspaceSchema(base: GraphQLSchema, model: WorkspaceModel): Promise<GraphQLSchema> {
  const sdl = workspaceSchemaSdl(model);
  if (!sdl) return base;
  await nextTurn();
  const document = parse(sdl, { noLocation: true });
  await nextTurn();
  const extended = extendSchema(base, document, { assumeValidSDL: false });
  await nextTurn();
  const [objects, relations] = [customObjectResolvers(model), relationResolvers(model)];
  return copySchema(extended, (typeName, name, field) => relations(typeName, name, objects(typeName, name, field)));
}
