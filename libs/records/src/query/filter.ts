import { BadInputError, ErrorCode } from '#errors/errors.js';
import { describeInput } from './limit.js';
import {
  FILTER_OPS,
  type FieldDef,
  type FieldType,
  type FilterNode,
  type FilterOp,
  type ObjectSchema,
  type SchemaRelation,
} from './types.js';

export const MAX_FILTER_LENGTH = 4000;
export const MAX_FILTER_DEPTH = 8;
export const MAX_FILTER_CONDITIONS = 50;

/** Operators each field type accepts. */
export const OPS_BY_TYPE: Record<FieldType, readonly FilterOp[]> = {
  text: ['eq', 'neq', 'in', 'is', 'gt', 'gte', 'lt', 'lte', 'startsWith', 'endsWith', 'like', 'ilike'],
  uuid: ['eq', 'neq', 'in', 'is'],
  timestamp: ['eq', 'neq', 'in', 'is', 'gt', 'gte', 'lt', 'lte'],
  textArray: ['containsAny', 'is'],
  bigint: ['eq', 'neq', 'in', 'is', 'gt', 'gte', 'lt', 'lte'],
  enum: ['eq', 'neq', 'in', 'is'],
  number: ['eq', 'neq', 'in', 'is', 'gt', 'gte', 'lt', 'lte'],
  boolean: ['eq', 'neq', 'is'],
  date: ['eq', 'neq', 'in', 'is', 'gt', 'gte', 'lt', 'lte'],
};

/** A finite decimal number as text (what a custom NUMBER field compares with). */
export function isNumberText(value: string): boolean {
  return /^-?\d{1,20}(\.\d{1,20})?([eE][+-]?\d{1,3})?$/.test(value) && Number.isFinite(Number(value));
}

/** A calendar date YYYY-MM-DD (a custom DATE field). */
export function isDateText(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && normalizeTimestamp(value) !== undefined;
}

/** The values a leaf of each list-parameter type takes, beyond text and timestamp (which are checked apart). */
const LEAF_VALUES: Partial<Record<FieldDef['type'], (def: FieldDef, v: string) => boolean>> = {
  uuid: (_def, v) => isUuid(v),
  bigint: (_def, v) => isSafeIntegerText(v),
  enum: (def, v) => def.values!.includes(v),
  number: (_def, v) => isNumberText(v),
  boolean: (_def, v) => v === 'true' || v === 'false',
  date: (_def, v) => isDateText(v),
  textArray: (def, v) => !def.values || def.values.includes(v),
};

/** Whether `v` is a valid value of a leaf of `type` other than text and timestamp (which are checked apart). */
export function validLeafValue(def: FieldDef, v: string): boolean {
  return LEAF_VALUES[def.type]?.(def, v) ?? true;
}

/** An integer JSON can carry exactly (±(2^53 − 1)), as text: what a bigint field accepts. */
export function isSafeIntegerText(value: string): boolean {
  return /^-?\d{1,16}$/.test(value) && Number.isSafeInteger(Number(value));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/**
 * An ISO 8601 date or date-time in a canonical form Postgres reads the same way whatever
 * its TimeZone setting: a date is midnight UTC, a date-time without offset is UTC.
 * Undefined when not a real calendar instant (`2024-02-30`, `yesterday`).
 */
export function normalizeTimestamp(value: string): string | undefined {
  const m = TIMESTAMP.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', z, sign, oh, om = '00'] = m;
  const date = new Date(Date.UTC(+y, +mo - 1, +d, +h, +mi, +s));
  const real =
    +y >= 1 &&
    date.getUTCFullYear() === +y &&
    date.getUTCMonth() === +mo - 1 &&
    date.getUTCDate() === +d &&
    date.getUTCHours() === +h &&
    date.getUTCMinutes() === +mi &&
    date.getUTCSeconds() === +s &&
    (sign === undefined || (+oh <= 14 && +om <= 59));
  if (!real) return undefined;
  const offset = z || sign === undefined ? 'Z' : `${sign}${oh}:${om}`;
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${frac}${offset}`;
}

function bad(message: string): BadInputError {
  return new BadInputError(ErrorCode.INVALID_FILTER, `filter: ${message}`);
}

function fieldList(schema: ObjectSchema): string {
  const relations = Object.keys(schema.relations ?? {});
  const fields = Object.keys(schema.fields).join(', ');
  return relations.length ? `${fields}; across a relation: ${relations.map((r) => `${r}.<field>`).join(', ')}` : fields;
}

/**
 * The relation filters of an object as one sentence for parameter and tool descriptions
 * (docs/rest.md, "Relation filters"): each relation and an example on a text field of its
 * target. Empty when the object has no relation a filter may cross.
 */
export function relationFilterNote(schema: ObjectSchema): string {
  const relations = Object.entries(schema.relations ?? {});
  if (!relations.length) return '';
  const examples = relations.map(([name, relation]) => {
    const text = Object.values(relation.target.fields).find((f) => f.type === 'text' && !f.path.startsWith('id'));
    return `${name}.${text?.path ?? 'id'}[eq]:"…"`;
  });
  return (
    `Across one relation: ${relations.map(([name, r]) => `${name}.<field of ${r.target.name}>`).join(', ')} ` +
    `(e.g. ${examples.join(', ')}); a record matches when at least one of its linked live records does; one hop only.`
  );
}

/**
 * A condition's field that crosses a relation (`company.name`, `opportunities.stage`): the
 * relation and the target's field. One hop only (docs/rest.md): `company.people.name` is refused.
 * Undefined when the field is not behind a relation.
 */
export function relationOf(
  field: string,
  schema: ObjectSchema,
  where = '',
): { name: string; relation: SchemaRelation; rest: string } | undefined {
  if (Object.hasOwn(schema.fields, field) || !schema.relations) return undefined;
  const dot = field.indexOf('.');
  const name = dot < 0 ? field : field.slice(0, dot);
  if (!Object.hasOwn(schema.relations, name)) return undefined;
  const relation = schema.relations[name];
  if (dot < 0) throw bad(`"${name}"${where} is a relation; filter on one of its fields, as in ${name}.<field>[op]:value`);
  const rest = field.slice(dot + 1);
  const target = relation.target;
  const next = rest.split('.')[0];
  if (!Object.hasOwn(target.fields, rest) && target.relations && Object.hasOwn(target.relations, next)) {
    throw bad(`"${field}"${where} crosses two relations; a filter crosses one relation only, as in ${name}.<field>`);
  }
  return { name, relation, rest };
}

function checkFieldAndOp(field: string, op: string, schema: ObjectSchema, where: string): FieldDef {
  const def = Object.hasOwn(schema.fields, field) ? schema.fields[field] : undefined;
  if (!def) {
    const subs = Object.keys(schema.fields).filter((p) => p.startsWith(`${field}.`));
    throw bad(
      subs.length
        ? `"${field}"${where} is a composite field; filter on one of its sub-fields: ${subs.join(', ')}`
        : `unknown field "${field}"${where}; allowed fields: ${fieldList(schema)}`,
    );
  }
  const allowedOps = OPS_BY_TYPE[def.type];
  if (!(FILTER_OPS as readonly string[]).includes(op)) {
    throw bad(`unknown operator "${op}" for ${field}${where}; operators for this field: ${allowedOps.join(', ')}`);
  }
  if (!allowedOps.includes(op as FilterOp)) {
    throw bad(`operator "${op}" is not allowed on ${def.type} field ${field}${where}; allowed: ${allowedOps.join(', ')}`);
  }
  return def;
}

/**
 * Checks one condition against the schema and returns it with values in canonical form.
 * Exported for callers that build conditions without the string syntax (GraphQL, MCP).
 * `where` ends messages, e.g. ` at character 12`.
 */
export function validateCondition(
  field: string,
  op: string,
  value: unknown,
  schema: ObjectSchema,
  where = '',
): Extract<FilterNode, { kind: 'cond' }> {
  const def = checkFieldAndOp(field, op, schema, where);
  const cond = `${field}[${op}]`;
  if (op === 'is') {
    if (value !== 'NULL' && value !== 'NOT_NULL') {
      throw bad(`${cond}${where} takes NULL or NOT_NULL; got ${describeValue(value)}`);
    }
    return { kind: 'cond', field, op, value };
  }
  const list = op === 'in' || op === 'containsAny';
  if (list) {
    if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string')) {
      throw bad(`${cond}${where} takes a non-empty array of double-quoted strings, as in ["a","b"]; got ${describeValue(value)}`);
    }
  } else if (typeof value !== 'string') {
    throw bad(`${cond}${where} takes a single value, not ${describeValue(value)}; use ${field}[in] for a list`);
  }
  const values: string[] = list ? (value as string[]) : [value as string];
  // Postgres text cannot hold NUL: refuse it here rather than fail in the database.
  if (values.some((v) => v.includes('\u0000'))) {
    throw bad(`the value of ${cond}${where} must not contain the NUL character (\\u0000)`);
  }
  const checked = values.map((v) => {
    if (def.type === 'uuid' && !isUuid(v)) throw bad(`${cond}${where} expects a uuid; got ${describeInput(v)}`);
    if (def.type === 'bigint' && !isSafeIntegerText(v)) {
      throw bad(`${cond}${where} expects an integer between -9007199254740991 and 9007199254740991; got ${describeInput(v)}`);
    }
    if ((def.type === 'enum' || def.type === 'textArray') && def.values && !def.values.includes(v)) {
      throw bad(`${cond}${where} expects one of ${def.values.join(', ')}; got ${describeInput(v)}`);
    }
    if (def.type === 'number' && !isNumberText(v)) throw bad(`${cond}${where} expects a number; got ${describeInput(v)}`);
    if (def.type === 'boolean' && v !== 'true' && v !== 'false')
      throw bad(`${cond}${where} expects true or false; got ${describeInput(v)}`);
    if (def.type === 'date' && !isDateText(v)) throw bad(`${cond}${where} expects a date such as 2026-12-31; got ${describeInput(v)}`);
    if (def.type !== 'timestamp') return v;
    const ts = normalizeTimestamp(v);
    if (ts === undefined) {
      throw bad(
        `${cond}${where} expects an ISO 8601 date or date-time such as 2024-01-31 or 2024-01-31T12:00:00Z; got ${describeInput(v)}`,
      );
    }
    return ts;
  });
  return { kind: 'cond', field, op: op as FilterOp, value: list ? checked : checked[0] };
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return value.length ? 'an array' : 'an empty array';
  if (value === undefined) return 'no value';
  return describeInput(value);
}

/**
 * `filter` (docs/rest.md, Twenty's REST syntax):
 *   list  := expr ("," expr)*                      a top-level list is an AND
 *   expr  := ("and" | "or") "(" list ")" | "not" "(" expr ")" | field "[" op "]" ":" value
 *   value := "json string" | ["json", "strings"] | bare token (no space , ( ) ")
 * Whitespace may separate any two tokens.
 */
export function parseFilter(raw: unknown, schema: ObjectSchema): FilterNode | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') {
    throw bad(`must be a string such as name[eq]:"Acme"; got ${describeInput(raw)}`);
  }
  if (raw.length > MAX_FILTER_LENGTH) {
    throw bad(`is ${raw.length} characters long; at most ${MAX_FILTER_LENGTH} are allowed`);
  }
  return new Parser(raw, schema).parse();
}

const IDENT = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/y;
const OP = /[A-Za-z]*/y;
const BARE = /[^\s,()"]+/y;

class Parser {
  private pos = 0;
  private conditions = 0;

  constructor(
    private readonly src: string,
    private readonly schema: ObjectSchema,
  ) {}

  parse(): FilterNode {
    const list = this.list(0);
    this.ws();
    if (this.pos < this.src.length) {
      const hint = this.peek() === ')' ? 'no "(" is open' : 'expected "," or the end of the filter';
      throw bad(`unexpected ${this.here()} at character ${this.pos + 1}; ${hint}`);
    }
    return list.length === 1 ? list[0] : { kind: 'and', children: list };
  }

  private list(depth: number): FilterNode[] {
    const out = [this.expr(depth)];
    while ((this.ws(), this.peek() === ',')) {
      this.pos++;
      out.push(this.expr(depth));
    }
    return out;
  }

  private expr(depth: number): FilterNode {
    this.ws();
    const start = this.pos;
    const name = this.match(IDENT);
    if (!name) {
      throw bad(`expected a condition field[op]:value, and(…), or(…) or not(…) at character ${start + 1}; found ${this.here()}`);
    }
    this.ws();
    if (this.peek() === '(') return this.group(name, start, depth);
    return this.condition(name, start);
  }

  private group(name: string, start: number, depth: number): FilterNode {
    if (name !== 'and' && name !== 'or' && name !== 'not') {
      throw bad(`unknown group "${name}(" at character ${start + 1}; groups are and(…), or(…) and not(…) (lower case)`);
    }
    if (depth + 1 > MAX_FILTER_DEPTH) {
      throw bad(`${name}(…) at character ${start + 1} nests deeper than ${MAX_FILTER_DEPTH} levels, the most allowed`);
    }
    this.pos++; // "("
    this.ws();
    if (this.peek() === ')') throw bad(`${name}() at character ${start + 1} is empty; put at least one condition inside`);
    let node: FilterNode;
    if (name === 'not') {
      node = { kind: 'not', child: this.expr(depth + 1) };
      this.ws();
      if (this.peek() === ',') {
        throw bad(`not(…) at character ${start + 1} takes one expression; wrap several in and(…) or or(…)`);
      }
    } else {
      node = { kind: name, children: this.list(depth + 1) };
    }
    this.ws();
    if (this.peek() !== ')') {
      throw bad(
        this.pos >= this.src.length
          ? `missing ")" to close "${name}(" opened at character ${start + 1}`
          : `unexpected ${this.here()} at character ${this.pos + 1}; expected "," or ")" to close "${name}(" opened at character ${start + 1}`,
      );
    }
    this.pos++;
    return node;
  }

  private condition(field: string, start: number): FilterNode {
    const at = ` at character ${start + 1}`;
    if (this.peek() !== '[') {
      throw bad(`expected "[" after "${field}"${at}, as in ${field}[eq]:value; found ${this.here()}`);
    }
    this.pos++;
    this.ws();
    const op = this.match(OP);
    this.ws();
    if (this.peek() !== ']') {
      throw bad(`expected an operator and "]" after "${field}["${at}; operators: ${FILTER_OPS.join(', ')}`);
    }
    this.pos++;
    const hop = relationOf(field, this.schema, at);
    const [schema, name, where] = hop ? [hop.relation.target, hop.rest, ` (in ${hop.name})${at}`] : [this.schema, field, at];
    // Field and operator are checked before the value is read, so the first error names them.
    checkFieldAndOp(name, op, schema, where);
    this.ws();
    if (this.peek() !== ':') throw bad(`expected ":" and a value after ${field}[${op}]${at}`);
    this.pos++;
    this.ws();
    const value = this.value(`${field}[${op}]`, at);
    if (++this.conditions > MAX_FILTER_CONDITIONS) {
      throw bad(`more than ${MAX_FILTER_CONDITIONS} conditions${at}; at most ${MAX_FILTER_CONDITIONS} are allowed`);
    }
    const cond = validateCondition(name, op, value, schema, where);
    return hop ? { kind: 'relation', relation: hop.name, child: cond } : cond;
  }

  private value(cond: string, at: string): string | string[] {
    const c = this.peek();
    if (c === '"') return this.string();
    if (c === '[') return this.array(cond, at);
    const bare = this.match(BARE);
    if (!bare) {
      throw bad(`missing value for ${cond}${at}; expected a "double-quoted string", ["a","b"], NULL or NOT_NULL`);
    }
    return bare;
  }

  private string(): string {
    const start = this.pos;
    let i = start + 1;
    while (i < this.src.length && this.src[i] !== '"') i += this.src[i] === '\\' ? 2 : 1;
    if (i >= this.src.length) throw bad(`unterminated string starting at character ${start + 1}; close it with "`);
    this.pos = i + 1;
    try {
      return JSON.parse(this.src.slice(start, i + 1)) as string;
    } catch {
      throw bad(`invalid string at character ${start + 1}; use JSON escapes such as \\" \\\\ \\n \\u00e9`);
    }
  }

  private array(cond: string, at: string): string[] {
    const start = this.pos;
    this.pos++;
    this.ws();
    const out: string[] = [];
    if (this.peek() === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.peek() !== '"') {
        throw bad(
          `${cond}${at}: array elements must be double-quoted strings, as in ["a","b"]; found ${this.here()} at character ${this.pos + 1}`,
        );
      }
      out.push(this.string());
      this.ws();
      const c = this.peek();
      this.pos++;
      if (c === ']') return out;
      if (c !== ',') {
        throw bad(`unterminated array starting at character ${start + 1}; expected "," or "]" at character ${this.pos}`);
      }
    }
  }

  private ws(): void {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos])) this.pos++;
  }

  private peek(): string | undefined {
    return this.src[this.pos];
  }

  private match(re: RegExp): string {
    re.lastIndex = this.pos;
    const m = re.exec(this.src);
    if (!m) return '';
    this.pos += m[0].length;
    return m[0];
  }

  private here(): string {
    return this.pos >= this.src.length ? 'the end of the filter' : JSON.stringify(this.src.slice(this.pos, this.pos + 12));
  }
}
