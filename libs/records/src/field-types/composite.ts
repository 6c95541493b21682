import { ApiProperty, ApiPropertyOptional } from './api-property.js';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  arrayMaxSize,
  IsArray,
  IsEmail,
  isEmail,
  IsInt,
  isInt,
  IsNumber,
  isNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  isURL,
  Matches,
  matches,
  Max,
  max,
  MaxLength,
  maxLength,
  Min,
  min,
  ValidateNested,
} from 'class-validator';
import { z } from 'zod';
import { property, type Ctor } from '../service/decorate.js';
import { jsonString, listText, orNull as sqlOrNull } from './column-sql.js';
import { cached, linkInput as restLinkInput, linkModel, SAFE, URL_RULE } from './column-rest.js';
import { absent, link, objectOf, text, type Check } from './fast-check.js';
import { isSafeIntegerText } from '../query/filter.js';
import type { FieldDef } from '../query/types.js';
import { FLOAT_FILTER } from './number.js';
import { checkText, CURRENCY_CODE, EMAIL, isPlain, jsonOf, LINK, orNull, ownValue, quote, URL, wrongType, type Input } from './shared.js';
import type { CellKind, ColumnField, CompositeType, FieldType, JsonSchema, SubField, SubFieldKind, UniqueRule } from './types.js';

/*
 * A composite type (CURRENCY, LINKS, EMAILS, PHONES, FULL_NAME, ADDRESS) is its sub-fields:
 * what each surface does with one follows from the sub-field's kind, here, so a composite
 * module only declares its sub-fields (and what is its own: search text, uniqueness).
 */

const MAX_SUB_TEXT = 200;
const FORMATS = {
  email: { rule: EMAIL, text: 'an e-mail address' },
  url: { rule: URL, text: 'a URL or a bare domain such as acme.com' },
  currency: { rule: CURRENCY_CODE, text: 'an ISO 4217 code: three capital letters such as USD' },
};

const linkInput = z.strictObject({
  url: z.string().meta({ description: LINK.url.tool }),
  label: z.string().nullable().optional(),
});
const nullableText = z.string().nullable();

/** What each surface does with a sub-field of one kind. */
interface Kind {
  /** The stored form of a given value (null included), or a problem pushed. */
  check(sub: SubField, raw: unknown, path: string, problems: string[]): unknown;
  /** No value, as records show it. */
  empty(): null | [];
  /** The list-parameter type of the sub-field; none: not filterable. */
  leafType?: FieldDef['type'];
  /** Its SQL in `json`, the field's jsonb value over `t`. */
  leafSql?(sub: SubField, json: string): string;
  graphql: { output: string; input: string; filter?: string; sdl?: Record<string, string> };
  json(sub: SubField): JsonSchema;
  input(): z.ZodType;
  output: z.ZodType;
  cell: CellKind;
  /** SQL text of its words in `v` (the composite's jsonb value); none: not searched. */
  search?(sub: SubField, v: string): string;
  /** In a column of its own (a standard object's field): JS source of its value from the column's, `e`. */
  fromColumn(e: string): string;
  /** The column value of a validated input value (null included). */
  toColumn(value: unknown): unknown;
  /** Its column is jsonb (a list); a list in REST models too. */
  jsonColumn?: true;
  /** REST body class rules and OpenAPI of the sub-field (every one optional and nullable), given its description and example. */
  restInput(sub: SubField, description: string | undefined, example: unknown): PropertyDecorator[];
  /** REST response model's OpenAPI of the sub-field, given `extra` (its description). */
  restModel(sub: SubField, extra: { description?: string }): PropertyDecorator[];
  /** `restInput`'s rules with class-validator's functions (input-fast-check.ts). */
  fastCheck(sub: SubField): Check;
  /** In an export, from its column `col` (over `t`): CSV cell and JSON text. */
  exportSql(col: string): { text: string; json: string };
  /** In the docs' field tables: its type and rule in words. */
  table: { type: string; rule(sub: SubField): string };
}

const numberExport = (col: string) => ({ text: col, json: sqlOrNull(`${col}::text`) });
const listExport = (col: string) => ({ text: listText(col), json: listText(col) });

const asIs = (value: unknown) => value;
const orNullJs = (e: string) => `(${e} ?? null)`;
const listJs = (e: string) => `(${e} ?? [])`;

const textOf = (sub: SubField, json: string) => `(${json}->>${quote(sub.name)})`;

const KINDS: Record<SubFieldKind, Kind> = {
  text: {
    check(sub, raw, path, problems) {
      const format = sub.format && FORMATS[sub.format];
      return checkText(raw, path, sub.maxLength ?? MAX_SUB_TEXT, problems, format?.rule, format?.text);
    },
    empty: () => null,
    leafType: 'text',
    leafSql: (sub, json) => textOf(sub, json),
    graphql: { output: 'String', input: 'String', filter: 'StringFilter' },
    json: () => orNull({ type: 'string' }),
    input: () => z.string().nullable().optional(),
    output: nullableText,
    cell: 'text',
    search: (sub, v) => `coalesce(${v} ->> ${quote(sub.name)}, '')`,
    fromColumn: orNullJs,
    toColumn: asIs,
    exportSql: (col) => ({ text: col, json: jsonString(col) }),
    table: {
      type: 'text',
      rule(sub) {
        if (sub.format === 'email') return `an e-mail address, at most ${sub.maxLength} characters`;
        if (sub.format === 'url')
          return `a URL (\`http\`/\`https\`) or a bare domain such as \`acme.com\`, kept as given; at most ${sub.maxLength}`;
        if (sub.format === 'currency') return 'ISO 4217 code: three capital letters (`USD`, `EUR`)';
        return `at most ${sub.maxLength} characters`;
      },
    },
    restInput(sub, description, example) {
      const rules =
        sub.format === 'email'
          ? [IsEmail()]
          : sub.format === 'url'
            ? [IsString(), IsUrl(URL_RULE)]
            : sub.format === 'currency'
              ? [
                  IsString(),
                  Matches(CURRENCY_CODE, { message: '$property must be an ISO 4217 currency code: three capital letters such as USD' }),
                ]
              : [IsString()];
      return [
        ApiPropertyOptional({
          type: String,
          ...(sub.format === 'email' ? { format: 'email' } : {}),
          nullable: true,
          ...(sub.format === 'currency' ? { pattern: '^[A-Z]{3}$' } : { maxLength: sub.maxLength }),
          example,
          ...(description ? { description } : {}),
        }),
        IsOptional(),
        ...rules,
        ...(sub.format === 'currency' ? [] : [MaxLength(sub.maxLength!)]),
      ];
    },
    restModel: (sub, extra) => [
      ApiProperty({
        type: String,
        ...(sub.format === 'email' ? { format: 'email' } : {}),
        nullable: true,
        example: sub.docs?.example,
        ...extra,
      }),
    ],
    fastCheck(sub) {
      const format: Check =
        sub.format === 'email'
          ? (v) => isEmail(v)
          : sub.format === 'url'
            ? (v) => isURL(v as string, URL_RULE)
            : sub.format === 'currency'
              ? (v) => matches(v as string, CURRENCY_CODE)
              : () => true;
      const length: Check = sub.format === 'currency' ? () => true : (v) => maxLength(v, sub.maxLength!);
      return (v) => absent(v) || (text(v) && format(v) && length(v));
    },
  },
  bigint: {
    check(_sub, raw, path, problems) {
      if (raw === null) return null;
      if ((typeof raw === 'number' && Number.isSafeInteger(raw)) || (typeof raw === 'string' && isSafeIntegerText(raw))) return Number(raw);
      problems.push(`${path} must be an integer up to ±9007199254740991`);
      return undefined;
    },
    empty: () => null,
    leafType: 'bigint',
    leafSql: (sub, json) => `(${textOf(sub, json)}::bigint)`,
    graphql: { output: 'BigFloat', input: 'BigFloat', filter: 'BigFloatFilter' },
    json: () => orNull({ type: 'integer' }),
    input: () => z.number().nullable().optional(),
    output: z.number().nullable(),
    cell: 'integer',
    // A bigint column reads as a string (pg): a JSON number within ±(2^53 − 1), as checked on write.
    fromColumn: (e) => `(${e} == null ? null : Number(${e}))`,
    toColumn: asIs,
    exportSql: numberExport,
    table: { type: 'integer', rule: () => 'an integer (JSON number) from -9007199254740991 to 9007199254740991; GraphQL `BigFloat`' },
    restInput: (_sub, description, example) => [
      ApiPropertyOptional({
        type: 'integer',
        format: 'int64',
        nullable: true,
        minimum: -SAFE,
        maximum: SAFE,
        example,
        ...(description ? { description } : {}),
      }),
      IsOptional(),
      IsInt({ message: '$property must be an integer (millionths of the currency unit)' }),
      Min(-SAFE, { message: `$property must be at least -${SAFE}` }),
      Max(SAFE, { message: `$property must be at most ${SAFE}` }),
    ],
    restModel: (sub, extra) => [ApiProperty({ type: 'integer', format: 'int64', nullable: true, example: sub.docs?.example, ...extra })],
    fastCheck: () => (v) => absent(v) || (isInt(v) && min(v, -SAFE) && max(v, SAFE)),
  },
  number: {
    check(sub, raw, path, problems) {
      if (raw === null) return null;
      const min = sub.min ?? -Infinity;
      const max = sub.max ?? Infinity;
      if (typeof raw === 'number' && Number.isFinite(raw) && raw >= min && raw <= max) return raw;
      problems.push(`${path} must be a number${sub.min !== undefined && sub.max !== undefined ? ` from ${sub.min} to ${sub.max}` : ''}`);
      return undefined;
    },
    empty: () => null,
    // Read only from a JSON number, so no stored value can fail the cast.
    leafType: 'number',
    leafSql: (sub, json) => `(CASE WHEN jsonb_typeof(${json}->${quote(sub.name)}) = 'number' THEN ${textOf(sub, json)}::float8 END)`,
    graphql: { output: 'Float', input: 'Float', filter: 'FloatFilter', sdl: FLOAT_FILTER },
    json: (sub) =>
      orNull({
        type: 'number',
        ...(sub.min !== undefined ? { minimum: sub.min } : {}),
        ...(sub.max !== undefined ? { maximum: sub.max } : {}),
      }),
    input: () => z.number().nullable().optional(),
    output: z.number().nullable(),
    cell: 'number',
    fromColumn: orNullJs,
    toColumn: asIs,
    exportSql: numberExport,
    table: {
      type: 'number',
      rule: (sub) => `a number${sub.min !== undefined && sub.max !== undefined ? ` from ${sub.min} to ${sub.max}` : ''}; GraphQL \`Float\``,
    },
    restInput: (sub, description, example) => [
      ApiPropertyOptional({
        type: Number,
        nullable: true,
        minimum: sub.min,
        maximum: sub.max,
        example,
        ...(description ? { description } : {}),
      }),
      IsOptional(),
      IsNumber({ allowNaN: false, allowInfinity: false }),
      ...(sub.min !== undefined ? [Min(sub.min)] : []),
      ...(sub.max !== undefined ? [Max(sub.max)] : []),
    ],
    restModel: (sub, extra) => [ApiProperty({ type: Number, nullable: true, example: sub.docs?.example, ...extra })],
    fastCheck: (sub) => (v) =>
      absent(v) ||
      (isNumber(v, { allowNaN: false, allowInfinity: false }) &&
        (sub.min === undefined || min(v, sub.min)) &&
        (sub.max === undefined || max(v, sub.max))),
  },
  textList: {
    check(sub, raw, path, problems) {
      const most = sub.maxItems ?? 20;
      if (raw === null) return [];
      if (!Array.isArray(raw) || raw.length > most || raw.some((v) => typeof v !== 'string' || v.length > 320 || !EMAIL.test(v))) {
        problems.push(`${path} must be an array of at most ${most} e-mail addresses`);
        return undefined;
      }
      return raw;
    },
    empty: () => [],
    leafType: 'textArray',
    leafSql: (sub, json) => `(${json}->${quote(sub.name)})`,
    graphql: { output: '[String!]!', input: '[String!]', filter: 'ArrayFilter' },
    json: () => ({ type: 'array', items: { type: 'string' } }),
    input: () => z.array(z.string()).nullable().optional(),
    output: z.array(z.string()),
    cell: 'json',
    search: (sub, v) => `search_array_text(${v} -> ${quote(sub.name)})`,
    fromColumn: listJs,
    toColumn: (value) => JSON.stringify(value ?? []),
    jsonColumn: true,
    exportSql: listExport,
    table: { type: 'list', rule: (sub) => `at most ${sub.maxItems} e-mail addresses; never null (\`[]\`)` },
    restInput: (sub, description) => [
      ApiPropertyOptional({ type: [String], nullable: true, maxItems: sub.maxItems, ...(description ? { description } : {}) }),
      IsOptional(),
      IsArray(),
      ArrayMaxSize(sub.maxItems!),
      IsEmail({}, { each: true }),
    ],
    restModel: () => [ApiProperty({ type: [String], example: [] })],
    fastCheck: (sub) => (v) =>
      absent(v) || (Array.isArray(v) && arrayMaxSize(v, sub.maxItems!) && v.every((item) => text(item) && isEmail(item))),
  },
  linkList: {
    check(sub, raw, path, problems) {
      const most = sub.maxItems ?? 20;
      if (raw === null) return [];
      const valid = (l: unknown) =>
        isPlain(l) &&
        typeof l.url === 'string' &&
        l.url.length <= LINK.url.maxLength &&
        URL.test(l.url) &&
        (l.label == null || typeof l.label === 'string');
      if (!Array.isArray(raw) || raw.length > most || !raw.every(valid)) {
        problems.push(`${path} must be an array of at most ${most} {url, label} links`);
        return undefined;
      }
      return (raw as Input[]).map((l) => ({ url: l.url, label: (l.label as string | undefined) ?? null }));
    },
    empty: () => [],
    graphql: { output: '[LinkMetadata!]!', input: '[LinkMetadataInput!]' },
    json: () => ({ type: 'array', items: { type: 'object', properties: { url: { type: 'string' }, label: orNull({ type: 'string' }) } } }),
    input: () => z.array(linkInput).nullable().optional(),
    output: z.array(z.object({ url: z.string(), label: nullableText })),
    cell: 'json',
    search: (sub, v) => `search_array_text(${v} -> ${quote(sub.name)}, '{url,label}')`,
    fromColumn: listJs,
    toColumn: (value) => JSON.stringify(((value ?? []) as Input[]).map((l) => ({ url: l.url, label: l.label ?? null }))),
    jsonColumn: true,
    exportSql: listExport,
    table: {
      type: 'list',
      rule: (sub) => `at most ${sub.maxItems} \`{url, label}\` (url as a URL above, label at most 200); never null (\`[]\`)`,
    },
    restInput: (sub, description) => [
      ApiPropertyOptional({
        type: () => [restLinkInput()],
        nullable: true,
        maxItems: sub.maxItems,
        ...(description ? { description } : {}),
      }),
      IsOptional(),
      IsArray(),
      ArrayMaxSize(sub.maxItems!),
      // ValidateNested walks an inner array as a list and finds nothing wrong with `[[]]`: each link must be an object.
      IsObject({ each: true, message: '$property must be a list of links, each an object such as {"url": "acme.com"}' }),
      ValidateNested({ each: true }),
      Type(() => restLinkInput()),
    ],
    restModel: () => [ApiProperty({ type: () => [linkModel()] })],
    fastCheck: (sub) => (v) => absent(v) || (Array.isArray(v) && arrayMaxSize(v, sub.maxItems!) && v.every(link)),
  },
};

/** A composite's sub-field as an MCP tool input (the standard objects' composite fields and custom ones alike). */
export function subFieldInput(sub: Pick<SubField, 'kind' | 'docs'>): z.ZodType {
  const schema = KINDS[sub.kind].input();
  return sub.docs?.tool ? schema.meta({ description: sub.docs.tool }) : schema;
}

/** A composite's sub-field in an MCP tool output (the records as REST returns them). */
export function subFieldOutput(sub: Pick<SubField, 'kind'>): z.ZodType {
  return KINDS[sub.kind].output;
}

/** A composite's sub-field's GraphQL type names: output, input (`[String!]!`: a list never null) and filter (none: not filtered). */
export function subFieldGraphql(sub: Pick<SubField, 'kind'>): { output: string; input: string; filter?: string } {
  return KINDS[sub.kind].graphql;
}

/** The CSV formula guard of a leaf: free text is guarded, a calling code as such (csv-formulas.ts). */
export function formulaGuard(leaf: { kind: string; formula?: 'callingCode' }): 'text' | 'callingCode' | undefined {
  return leaf.kind === 'text' ? (leaf.formula ?? 'text') : undefined;
}

/** The column of a composite's sub-field, in a field held in columns of its own (a standard object's). */
export function subColumn(field: ColumnField, sub: Pick<SubField, 'name'>): string {
  const column = field.columns?.[sub.name];
  if (!column)
    throw new Error(`${field.name}.${sub.name}: a ${field.type} field is stored in a column per sub-field, and names none for it`);
  return column;
}

const doc = (text: string | undefined) => (text ? `${JSON.stringify(text)} ` : '');

/** The GraphQL definitions of a composite's four types, and those its sub-fields need, by type name. */
function compositeSdl(composite: CompositeType): Record<string, string> {
  const { object, input, filter, orderBy } = composite.graphql;
  const subs = composite.subFields;
  const line = (sub: SubField, type: string, text?: string) => `${doc(text)}${sub.name}: ${type}`;
  const definitions: Record<string, string> = {
    [object]: [
      `type ${object} { ${subs.map((s) => line(s, KINDS[s.kind].graphql.output, s.docs?.graphql)).join(' ')} }`,
      `input ${input} { ${subs.map((s) => line(s, KINDS[s.kind].graphql.input, s.docs?.graphqlInput)).join(' ')} }`,
      `input ${filter} { ${subs
        .filter((s) => s.filterable && KINDS[s.kind].graphql.filter)
        .map((s) => line(s, KINDS[s.kind].graphql.filter!))
        .join(' ')} }`,
      `input ${orderBy} { ${subs
        .filter((s) => s.sortable)
        .map((s) => line(s, 'OrderByDirection'))
        .join(' ')} }`,
    ].join('\n'),
  };
  for (const sub of subs) Object.assign(definitions, KINDS[sub.kind].graphql.sdl);
  return definitions;
}

/** Its searchable sub-fields' words: text, e-mail lists and links (numbers and amounts are not searched). */
function wordsOf(composite: CompositeType): (v: string) => string {
  const searched = composite.subFields.filter((sub) => KINDS[sub.kind].search);
  return (v) => searched.map((sub) => KINDS[sub.kind].search!(sub, v)).join(` || ' ' || `);
}

/** What a composite module adds to its sub-fields. */
export interface CompositeSpec {
  pageWord: string;
  unique?: UniqueRule;
  /** `words`: every searchable sub-field; a function: its own SQL; absent: not searched. */
  search?: 'words' | ((v: string) => string);
}

/** The REST body class of a composite type (`DomainNameInput`), made once: every sub-field optional and nullable. */
export function restInputClass(type: CompositeType): Ctor {
  return cached('input', type.rest.input, (cls) => {
    // tsc emits Object for `x?: T | null`.
    for (const sub of type.subFields) {
      const example = sub.docs?.inputExample !== undefined ? sub.docs.inputExample : sub.docs?.example;
      property(cls, sub.name, Object, KINDS[sub.kind].restInput(sub, sub.docs?.restInput, example));
    }
  });
}

/** The REST response model of a composite type (`LinksModel`), made once. */
export function restModelClass(type: CompositeType): Ctor {
  return cached('model', type.rest.model, (cls) => {
    for (const sub of type.subFields) {
      const extra = sub.docs?.model ? { description: sub.docs.model } : {};
      property(cls, sub.name, KINDS[sub.kind].jsonColumn ? Array : Object, KINDS[sub.kind].restModel(sub, extra));
    }
  });
}

/** The field type of a composite: an object of its sub-fields, each a leaf of its own. */
export function compositeType(composite: CompositeType, spec: CompositeSpec): FieldType {
  const subs = composite.subFields;
  const filterable = subs.filter((sub) => sub.filterable && KINDS[sub.kind].leafType);
  // Every record read of a composite passes here: a plain loop, no intermediate arrays.
  const full = (value: Input): Input => {
    const out: Input = {};
    for (const sub of subs) out[sub.name] = value[sub.name] ?? KINDS[sub.kind].empty();
    return out;
  };
  const type: FieldType = {
    name: composite.name,
    word: `an object {${subs.map((s) => s.name).join(', ')}}`,
    pageWord: spec.pageWord,
    composite,
    unique: spec.unique,
    sortBy: composite.sortBy,
    search: spec.search === 'words' ? wordsOf(composite) : spec.search,
    check(field, value, path, problems) {
      if (!isPlain(value)) return wrongType(type, field, path, problems);
      for (const key of Object.keys(value)) if (!subs.some((s) => s.name === key)) problems.push(`${path}.${key} is not a known field`);
      const out: Input = {};
      for (const sub of subs) {
        const raw = value[sub.name];
        if (raw !== undefined) out[sub.name] = KINDS[sub.kind].check(sub, raw, `${path}.${sub.name}`, problems);
      }
      return out;
    },
    empty: () => full({}),
    shown: (value) => (isPlain(value) ? full(value) : (value ?? null)),
    leaves(field) {
      const json = jsonOf(field);
      return filterable.map((sub) => ({
        path: `${field.name}.${sub.name}`,
        column: 'custom',
        nullable: true,
        sortable: sub.sortable,
        read: (row: Record<string, unknown>) =>
          ((ownValue(row.custom, field.name) as Input | null | undefined)?.[sub.name] ?? null) as unknown,
        type: KINDS[sub.kind].leafType!,
        sql: KINDS[sub.kind].leafSql!(sub, json),
      }));
    },
    // In columns, a list is never null (`[]`), and so is not nullable.
    storedColumns: (field, only) => subs.filter((sub) => !only || KINDS[sub.kind].jsonColumn).map((sub) => subColumn(field, sub)),
    recordSource: (field, read) =>
      `{ ${subs.map((sub) => `${JSON.stringify(sub.name)}: ${KINDS[sub.kind].fromColumn(read(subColumn(field, sub)))}`).join(', ')} }`,
    writeColumns(field, value, columns) {
      for (const sub of subs) {
        const subValue = value === null ? null : (value as Input)[sub.name];
        if (subValue !== undefined) columns[subColumn(field, sub)] = KINDS[sub.kind].toColumn(subValue);
      }
    },
    columnLeaves: (field) =>
      filterable.map((sub) => ({
        path: `${field.name}.${sub.name}`,
        column: subColumn(field, sub),
        type: KINDS[sub.kind].leafType!,
        nullable: KINDS[sub.kind].empty() === null,
        sortable: sub.sortable,
      })),
    graphql: () => ({
      output: composite.graphql.object,
      input: composite.graphql.input,
      filter: composite.graphql.filter,
      order: composite.graphql.orderBy,
      sdl: compositeSdl(composite),
    }),
    jsonSchema(_field, mode) {
      const properties = Object.fromEntries(subs.map((sub) => [sub.name, KINDS[sub.kind].json(sub)]));
      const object: JsonSchema = { type: 'object', properties, ...(mode === 'input' ? { additionalProperties: false } : {}) };
      return mode === 'input' ? orNull(object) : object;
    },
    mcpInput: () => z.strictObject(Object.fromEntries(subs.map((sub) => [sub.name, subFieldInput(sub)]))),
    mcpOutput: () => z.object(Object.fromEntries(subs.map((sub) => [sub.name, subFieldOutput(sub)]))),
    csv: subs.map((sub) => ({ sub: sub.name, cell: KINDS[sub.kind].cell, guard: formulaGuard(sub) })),
    column: {
      restInput(field, mode, description) {
        const input = restInputClass(composite);
        return {
          design: Object,
          decorators: [
            ApiPropertyOptional({ type: () => input, nullable: true, ...(description ? { description } : {}) }),
            IsOptional(),
            IsObject(),
            ValidateNested(),
            Type(() => input),
          ],
        };
      },
      restModel() {
        const model = restModelClass(composite);
        return { design: Object, decorators: [ApiProperty({ type: () => model })] };
      },
      fastCheck() {
        const nested = objectOf(new Map(subs.map((sub) => [sub.name, KINDS[sub.kind].fastCheck(sub)])));
        return (v) => absent(v) || nested(v);
      },
      toolInput(field) {
        const schema = z
          .strictObject(Object.fromEntries(subs.map((sub) => [sub.name, subFieldInput(sub)])))
          .nullable()
          .optional();
        return field.docs?.tool ? schema.meta({ description: field.docs.tool }) : schema;
      },
      toolOutput: () => z.object(Object.fromEntries(subs.map((sub) => [sub.name, subFieldOutput(sub)]))),
      exportLeaves: (field) =>
        subs.map((sub) => ({ sub: sub.name, ...KINDS[sub.kind].exportSql(`t.${subColumn(field, sub)}`), guard: formulaGuard(sub) })),
      tableRows: (field) =>
        subs.map((sub) => ({ path: `${field.name}.${sub.name}`, type: KINDS[sub.kind].table.type, rule: KINDS[sub.kind].table.rule(sub) })),
    },
  };
  return type;
}
