import { isUUID } from 'class-validator';
import { BadInputError, ErrorCode } from '#errors/errors.js';
import { checkCustomValues } from '../objects/index.js';
import type { ObjectDefinition } from './object-definitions.js';
import { validateInput } from './validate-input.js';

/*
 * Record bodies checked into the columns a write sets, with the same rules and messages on
 * every path that writes (REST, GraphQL, MCP, imports): a problem is a BadInputError.
 */

export const MAX_BATCH = 60;

/** 400 unless `id` is a UUID. */
export function assertId(id: string): void {
  if (!isUUID(id)) throw new BadInputError(ErrorCode.INVALID_ID, `id must be a UUID; got "${id}"`);
}

/** A batch body checked for shape and size (1 to 60 records). */
export function batchOf(bodies: unknown): unknown[] {
  if (!Array.isArray(bodies)) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'body must be a JSON array of records');
  if (bodies.length === 0 || bodies.length > MAX_BATCH) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `a batch holds 1 to ${MAX_BATCH} records; got ${bodies.length}`);
  }
  return bodies;
}

/** How messages name the i-th record of a list (`data[2]`, `[2]`), or '' for a single record. */
export function itemName(listName: string | null, i: number): string {
  return listName === null ? '' : `${listName}[${i}]`;
}

/** The body as the input class accepts it: as it is when the fast check is sure, else through class-validator (which words the errors). */
function validated(def: ObjectDefinition, body: unknown, mode: 'create' | 'update', prefix: string): object {
  if (def.acceptsAsIs[mode](body)) return body as object;
  return validateInput(mode === 'create' ? def.createInput : def.updateInput, body, prefix);
}

/**
 * A body checked and turned into the columns it writes: built-in fields by the object's
 * input class, the workspace's custom fields by their types (into `custom`, as JSON on
 * create and as the values given on update). Problems of both kinds are reported together.
 */
export function columnsToWrite(def: ObjectDefinition, body: unknown, mode: 'create' | 'update', prefix = ''): Record<string, unknown> {
  const fields = def.custom ?? [];
  if (!fields.length || body === null || typeof body !== 'object' || Array.isArray(body)) {
    return def.toColumns(validated(def, body, mode, prefix));
  }
  const names = new Set(fields.map((f) => f.name));
  // fromEntries defines own properties: a "__proto__" key stays a key (and is refused), never a prototype.
  const builtIn = Object.fromEntries(Object.entries(body).filter(([key]) => !names.has(key)));
  const problems: string[] = [];
  let columns: Record<string, unknown> = {};
  try {
    columns = def.toColumns(validated(def, builtIn, mode, prefix));
  } catch (err) {
    if (!(err instanceof BadInputError)) throw err;
    problems.push(...err.messages);
  }
  const values = checkCustomValues(fields, body as Record<string, unknown>, mode, prefix, problems);
  if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
  if (mode === 'create' && Object.keys(values).length) columns.custom = JSON.stringify(values);
  if (mode === 'update' && Object.keys(values).length) columns.custom = values;
  return columns;
}

/** Whether checked update columns set anything. */
export function setsAnything(written: Record<string, unknown>): boolean {
  const { custom, ...columns } = written;
  return Object.keys(columns).length > 0 || custom !== undefined;
}
