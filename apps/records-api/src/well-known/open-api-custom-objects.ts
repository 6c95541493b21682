import type { OpenAPIObject } from '@nestjs/swagger';
import { randomBytes } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { customObjectDeclaration, OBJECTS, type ObjectDeclaration } from '#records/objects/index.js';
import type { WorkspaceModel } from '#records/service/data-model.js';
import { embeddedText } from '#records/service/embedded-text.js';
import { deletedAtText } from '#records/service/rest-classes.js';
import { visibleSchema } from '#records/service/visible-schema.js';
import { depthQuery, filterOnlyQuery, groupByQueries, idParam, listQueries } from '../rest/open-api-decorators.js';
import { restOperations } from '../rest/rest-operations.js';
import { addEventsOf } from './open-api-webhooks.js';
import type { HiddenFields } from './open-api-restricted.js';

/*
 * A workspace's own objects in the OpenAPI document of its credentials (docs/rest.md
 * "OpenAPI"; docs/decisions/0059-custom-objects-open-api-and-mcp.md). Their REST routes are
 * the standard objects' (rest/custom-object.controller.ts answers with the same handlers), so
 * each operation is the first standard object's operation of the base document — the same
 * parameters, responses, headers and error codes, as the controllers' decorators made them —
 * with what names the object put back from the same sources the decorators use: the
 * operation's id, summary and description (restOperations), the parameters that name its
 * fields (open-api-decorators.ts), its schemas, tag and data keys.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- OpenAPI JSON, walked and rewritten
type Json = Record<string, any>;
type Kind = keyof ReturnType<typeof restOperations>;
type Parameter = { name: string; description?: string; examples?: unknown };

/** The object whose operations in the base document every custom object's are made from. */
const PATTERN = OBJECTS[0];
const SUFFIXES = ['Model', 'CreateInput', 'UpdateInput'] as const;
const ref = (name: string) => `#/components/schemas/${name}`;

/** `<prefix>/<plural>/<rest>` of the pattern's path, for `plural`: only the whole path segment changes. */
const pathFor = (path: string, plural: string) =>
  path.replace(new RegExp(`(?<=^/rest/(?:batch/|restore/)?)${PATTERN.plural}(?=/|$)`), plural);

interface Pattern {
  path: string;
  method: string;
  /** The operation as JSON text: parsing it is the cheapest deep copy, and its schema references are renamed in the text. */
  text: string;
}

/** Each REST call of the pattern object, found in the base document by its operation id. */
function patternOperations(document: OpenAPIObject): Map<Kind, Pattern> {
  const byId = new Map<string, Pattern>();
  for (const [path, item] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(item as Json))
      if (operation?.operationId) byId.set(operation.operationId, { path, method, text: JSON.stringify(operation) });
  const found = new Map<Kind, Pattern>();
  for (const [kind, { operation }] of Object.entries(restOperations(PATTERN)) as [Kind, { operation: { operationId: string } }][]) {
    const at = byId.get(operation.operationId);
    if (at) found.set(kind, at);
  }
  return found;
}

/** The parameters of each call that name the object or its fields, as the decorators describe them. */
function namedParameters(object: ObjectDeclaration, model: WorkspaceModel, hidden: ReadonlySet<string> | undefined) {
  const schema = visibleSchema(model.definition(object.plural).schema, hidden);
  const embedded = embeddedText(object, 'rest');
  const id = idParam(object.singular) as Parameter;
  const filter = filterOnlyQuery(schema) as Parameter;
  const examples = { filter: object.docs.filterExamples, orderBy: object.docs.orderByExamples };
  const byKind: Partial<Record<Kind, Parameter[]>> = {
    list: listQueries(schema, embedded, examples) as Parameter[],
    groupBy: groupByQueries(schema, object.docs.groupByExample) as Parameter[],
    get: [depthQuery(embedded) as Parameter, id],
    update: [id],
    delete: [id],
    restore: [id],
    updateByFilter: [filter],
    deleteByFilter: [filter],
  };
  return byKind;
}

/** `text` with every `$ref` to the pattern's model and inputs pointed at `typeName`'s. */
function retarget(text: string, typeName: string): string {
  let out = text;
  for (const suffix of SUFFIXES)
    out = out.replaceAll(JSON.stringify(ref(`${PATTERN.typeName}${suffix}`)), JSON.stringify(ref(`${typeName}${suffix}`)));
  return out;
}

const PATTERN_OPERATIONS = restOperations(PATTERN);
const made = new WeakMap<ObjectDeclaration, ReturnType<typeof restOperations>>();
const operationsOf = (object: ObjectDeclaration) => {
  let found = made.get(object);
  if (!found) made.set(object, (found = restOperations(object)));
  return found;
};

/** The pattern's operation of `kind`, for `object`. */
function operationOf(kind: Kind, pattern: Pattern, object: ObjectDeclaration, parameters: Parameter[] | undefined): Json {
  const operation = JSON.parse(retarget(pattern.text, object.typeName)) as Json;
  const mine = operationsOf(object)[kind];
  const theirs = PATTERN_OPERATIONS[kind];
  delete operation.description;
  Object.assign(operation, mine.operation, { tags: [object.plural] });
  for (const parameter of (operation.parameters ?? []) as Parameter[]) {
    const named = parameters?.find((p) => p.name === parameter.name);
    if (!named) continue;
    parameter.description = named.description;
    if (named.examples) parameter.examples = named.examples;
    else delete parameter.examples;
  }
  const success = Object.entries(operation.responses as Json).find(([status]) => /^2/.test(status))?.[1] as Json | undefined;
  if (success && 'response' in mine && mine.response) success.description = mine.response;
  const data = success?.content?.['application/json']?.schema?.properties?.data as Json | undefined;
  if (data && 'key' in mine && 'key' in theirs && data.properties?.[theirs.key]) {
    data.required = (data.required as string[]).map((k) => (k === theirs.key ? mine.key : k));
    data.properties = { [mine.key]: data.properties[theirs.key] };
  }
  return operation;
}

/**
 * The workspace's active custom objects in `document` (a copy of the base document): their
 * paths, tag, webhook events and schemas, the schemas with the fields every record has; the
 * caller adds their fields as it adds custom fields to the standard objects. Returns their
 * declarations. An object whose names the base document uses already (refused on creation)
 * is left out rather than overwrite them.
 */
export async function addCustomObjects(document: OpenAPIObject, model: WorkspaceModel, hidden: HiddenFields): Promise<ObjectDeclaration[]> {
  const active = model.objects.filter((o) => o.isActive);
  if (!active.length) return [];
  const schemas = ((document.components ??= {}).schemas ??= {}) as Record<string, Json>;
  const patterns = patternOperations(document);
  const model0 = schemas[`${PATTERN.typeName}Model`].properties as Json;
  const created: ObjectDeclaration[] = [];
  for (const object of active.map(customObjectDeclaration)) {
    if (SUFFIXES.some((s) => schemas[`${object.typeName}${s}`]) || document.paths[`/rest/${object.plural}`]) continue;
    schemas[`${object.typeName}Model`] = {
      type: 'object',
      properties: {
        id: structuredClone(model0.id),
        createdAt: structuredClone(model0.createdAt),
        updatedAt: structuredClone(model0.updatedAt),
        deletedAt: { ...structuredClone(model0.deletedAt), description: deletedAtText(object.singular) },
      },
      required: ['id', 'createdAt', 'updatedAt', 'deletedAt'],
    };
    const chosenId = (schemas[`${PATTERN.typeName}CreateInput`].properties as Json).id;
    schemas[`${object.typeName}CreateInput`] = {
      type: 'object',
      properties: { id: structuredClone(chosenId) },
      additionalProperties: false,
    };
    schemas[`${object.typeName}UpdateInput`] = { type: 'object', properties: {}, additionalProperties: false };
    const parameters = namedParameters(object, model, hidden.get(object.plural));
    for (const [kind, pattern] of patterns) {
      ((document.paths[pathFor(pattern.path, object.plural)] ??= {}) as Json)[pattern.method] = operationOf(
        kind,
        pattern,
        object,
        parameters[kind],
      );
    }
    // Beside the standard objects' tags, before the others (webhooks).
    const tags = (document.tags ??= []);
    const after = tags.reduce((last, tag, i) => (model.has(tag.name) ? i : last), -1);
    tags.splice(after + 1, 0, { name: object.plural, description: object.docs.tag });
    addEventsOf(document, object.singular);
    created.push(object);
    // About a millisecond per object; 50 objects' at once would hold the event loop for tens of them.
    await yieldToEventLoop();
  }
  return created;
}

/** Bytes of JSON made between two turns of the event loop. */
const SLICE_BYTES = 256 * 1024;

/**
 * `document` as UTF-8 JSON, made a slice at a time: what it has beyond `base` (a workspace's
 * own objects' paths, schemas and events) is serialised entry by entry, yielding between
 * slices, and spliced into the rest. In one go, a 6 MB document (50 objects of 100 fields)
 * held the event loop for 80–120 ms (JSON.stringify, then Buffer.from of a two-byte string).
 */
export async function jsonBytes(document: OpenAPIObject, base: OpenAPIObject): Promise<Buffer> {
  const nonce = randomBytes(12).toString('hex');
  const values: unknown[] = [];
  const hold = (into: Json | undefined, known: Json | undefined) => {
    for (const key of Object.keys(into ?? {})) {
      if (known && Object.hasOwn(known, key)) continue;
      values.push(into![key]);
      into![key] = `${nonce}:${values.length - 1}`;
    }
  };
  hold(document.paths, base.paths);
  hold(document.components?.schemas, base.components?.schemas);
  hold((document as Json).webhooks, (base as Json).webhooks);
  const pieces: Buffer[] = [];
  let slice = 0;
  for (const value of values) {
    const piece = Buffer.from(JSON.stringify(value));
    pieces.push(piece);
    slice += piece.length;
    if (slice >= SLICE_BYTES) {
      slice = 0;
      await yieldToEventLoop();
    }
  }
  const parts = JSON.stringify(document).split(new RegExp(`"${nonce}:(\\d+)"`));
  return Buffer.concat(parts.map((part, i) => (i % 2 ? pieces[Number(part)] : Buffer.from(part))));
}
