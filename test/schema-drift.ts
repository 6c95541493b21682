import type { DataSource } from 'typeorm';
import { fieldType } from '#records/field-types/index.js';
import { OBJECTS, type ObjectDeclaration, type StandardField, type SubFieldKind } from '#records/objects/index.js';

/*
 * The record tables as the migrations made them, compared with the record objects'
 * declarations (docs/architecture.md, "One declaration per object" and "Schema"): the app
 * derives its SQL from the declarations alone, so a column a migration types, names or
 * constrains differently than its field says is a bug no other test sees until a row hits it.
 */

/** What a column must be. `types` are pg_type names; `label` is how messages show the expected type. */
interface ExpectedColumn {
  /** Who declares it: `people.emails.additionalEmails`, or `companies (system column)`. */
  owner: string;
  column: string;
  types: string[];
  label: string;
  /** Fractional-second digits of a timestamptz. */
  precision?: number;
  /** A varchar must hold the field's maxLength. */
  maxLength?: number;
  notNull: boolean;
  /** The literal of the column default (`[]`, `NEW`); undefined: not checked. */
  default?: string;
  /** An enum: a CHECK on this column alone lists exactly these values. */
  values?: readonly string[];
  /** A relation: the foreign key (workspace_id, column) → target (workspace_id, id). */
  references?: string;
  /** Allowed to be absent (a system column not every schema has yet). */
  optional?: boolean;
}

const TEXT = { types: ['text', 'varchar'], label: 'text' };
const UUID = { types: ['uuid'], label: 'uuid' };
const JSONB = { types: ['jsonb'], label: 'jsonb' };
/** Millisecond timestamps, so a cursor made from a JavaScript Date points at exactly one row (the initial migration). */
const TIMESTAMP = { types: ['timestamptz'], label: 'timestamp(3) with time zone', precision: 3 };

/**
 * Columns every record table has and no declaration lists. `custom` (a jsonb of custom
 * field values) is allowed but not required, so this holds before and after its migration.
 */
function systemColumns(object: ObjectDeclaration): ExpectedColumn[] {
  const owner = `${object.plural} (system column)`;
  return [
    { owner, column: 'workspace_id', ...UUID, notNull: true },
    { owner, column: 'id', ...UUID, notNull: true },
    { owner, column: 'created_at', ...TIMESTAMP, notNull: true },
    { owner, column: 'updated_at', ...TIMESTAMP, notNull: true },
    { owner, column: 'deleted_at', ...TIMESTAMP, notNull: false },
    { owner, column: 'custom', ...JSONB, notNull: true, optional: true },
    // Kept by a trigger for search (docs/decisions/0030-search.md); optional for the same reason as custom.
    { owner, column: 'search_vector', types: ['tsvector'], label: 'tsvector', notNull: true, optional: true },
  ];
}

const SUB_FIELD_COLUMNS: Record<SubFieldKind, Omit<ExpectedColumn, 'owner' | 'column'>> = {
  text: { ...TEXT, notNull: false },
  textList: { ...JSONB, notNull: true, default: '[]' },
  linkList: { ...JSONB, notNull: true, default: '[]' },
  bigint: { types: ['int8'], label: 'bigint', notNull: false },
  number: { types: ['float8'], label: 'double precision', notNull: false },
};

type ColumnRule = Omit<ExpectedColumn, 'owner' | 'column'>;

/** The column of a single-valued standard field, by its registry type. */
const COLUMN_OF_TYPE: Record<
  string,
  (field: StandardField, objects: readonly ObjectDeclaration[], problems: string[], owner: string) => ColumnRule
> = {
  TEXT: (field) => ({ ...TEXT, maxLength: field.settings?.maxLength, notNull: !field.isNullable }),
  SELECT: (field) => ({ ...TEXT, notNull: !field.isNullable, default: field.defaultValue, values: field.options?.map((o) => o.value) }),
  DATE_TIME: () => ({ ...TIMESTAMP, notNull: false }),
  RELATION: (field, objects, problems, owner) => {
    const targetObject = field.settings?.targetObject;
    const target = objects.find((o) => o.plural === targetObject);
    if (!target) problems.push(`${owner}: relation to ${targetObject}, which is no record object`);
    return { ...UUID, notNull: false, references: target?.table };
  },
};

/** The columns an object's declaration implies, and the problems of the declaration itself. */
function declaredColumns(object: ObjectDeclaration, objects: readonly ObjectDeclaration[], problems: string[]): ExpectedColumn[] {
  const columns: ExpectedColumn[] = [];
  for (const field of object.fields) {
    const owner = `${object.plural}.${field.name}`;
    const composite = fieldType(field.type).composite;
    if (!composite) {
      const expected = COLUMN_OF_TYPE[field.type];
      if (!expected) problems.push(`${owner}: a standard field of type ${field.type} has no column rule here`);
      else if (!field.column) problems.push(`${owner}: no column declared`);
      else columns.push({ owner, column: field.column, ...expected(field, objects, problems, owner) });
      continue;
    }
    const declared = field.columns ?? {};
    for (const name of Object.keys(declared)) {
      if (!composite.subFields.some((s) => s.name === name)) problems.push(`${owner}.${name}: ${field.type} has no sub-field ${name}`);
    }
    for (const sub of composite.subFields) {
      const column = declared[sub.name];
      if (!column) problems.push(`${owner}.${sub.name}: no column declared for this ${field.type} sub-field`);
      else columns.push({ owner: `${owner}.${sub.name}`, column, ...SUB_FIELD_COLUMNS[sub.kind], maxLength: sub.maxLength });
    }
  }
  return columns;
}

interface ColumnRow {
  table: string;
  column: string;
  type: string;
  typmod: number;
  formatted: string;
  notNull: boolean;
  default: string | null;
}

interface ConstraintRow {
  table: string;
  kind: 'c' | 'f';
  columns: string[];
  target: string | null;
  targetColumns: string[] | null;
  definition: string;
}

/** `'[]'::jsonb` → `[]`; anything but a plain literal → undefined. */
function literal(expression: string | null): string | undefined {
  const match = expression && /^'((?:[^']|'')*)'::[a-z ]+$/.exec(expression);
  return match ? match[1].replace(/''/g, "'") : undefined;
}

/**
 * The differences between the record tables in `schema` and the declarations of `objects`,
 * one message per difference naming the object, the field and the column; empty when they agree.
 * Foreign keys must point at the target object's table in the same schema.
 */
export async function schemaDrift(
  db: Pick<DataSource, 'query'>,
  schema = 'public',
  objects: readonly ObjectDeclaration[] = OBJECTS,
): Promise<string[]> {
  const tables = objects.map((o) => o.table);
  const columnRows: ColumnRow[] = await db.query(
    `SELECT c.relname AS "table", a.attname AS "column", t.typname AS type, a.atttypmod AS typmod,
            format_type(a.atttypid, a.atttypmod) AS formatted, a.attnotnull AS "notNull", pg_get_expr(d.adbin, d.adrelid) AS "default"
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       JOIN pg_type t ON t.oid = a.atttypid
       LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
      WHERE n.nspname = $1 AND c.relname = ANY($2) AND c.relkind IN ('r', 'p')
      ORDER BY c.relname, a.attnum`,
    [schema, tables],
  );
  const constraintRows: ConstraintRow[] = await db.query(
    `SELECT c.relname AS "table", k.contype AS kind,
            array(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
                    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i)::text[] AS columns,
            CASE WHEN tn.nspname = $1 THEN tc.relname END AS target,
            array(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
                    JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i)::text[] AS "targetColumns",
            pg_get_constraintdef(k.oid) AS definition
       FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_class tc ON tc.oid = k.confrelid
       LEFT JOIN pg_namespace tn ON tn.oid = tc.relnamespace
      WHERE n.nspname = $1 AND c.relname = ANY($2) AND k.contype IN ('c', 'f')`,
    [schema, tables],
  );

  const problems: string[] = [];
  for (const object of objects) {
    const table = object.table;
    const actual = new Map(columnRows.filter((r) => r.table === table).map((r) => [r.column, r]));
    const constraints = constraintRows.filter((r) => r.table === table);
    const expected = [...systemColumns(object), ...declaredColumns(object, objects, problems)];
    if (actual.size === 0) {
      problems.push(`${object.plural}: table ${schema}.${table} does not exist`);
      continue;
    }

    const seen = new Map<string, string>();
    for (const want of expected) {
      const at = `${want.owner}: column ${table}.${want.column}`;
      const other = seen.get(want.column);
      if (other) problems.push(`${at} is also ${other}'s column`);
      seen.set(want.column, want.owner);
      const got = actual.get(want.column);
      if (!got) {
        if (!want.optional) problems.push(`${at} is missing`);
        continue;
      }
      if (!want.types.includes(got.type) || (want.precision !== undefined && got.typmod !== want.precision)) {
        problems.push(`${at} is ${got.formatted}, expected ${want.label}`);
      } else if (want.maxLength !== undefined && got.type === 'varchar' && got.typmod !== -1 && got.typmod - 4 < want.maxLength) {
        problems.push(`${at} is ${got.formatted}, shorter than the field's maxLength ${want.maxLength}`);
      }
      if (got.notNull !== want.notNull)
        problems.push(`${at} is ${got.notNull ? 'NOT NULL' : 'nullable'}, expected ${want.notNull ? 'NOT NULL' : 'nullable'}`);
      if (want.default !== undefined && literal(got.default) !== want.default) {
        problems.push(`${at} defaults to ${got.default ?? 'nothing'}, expected '${want.default}'`);
      }
      if (want.values) {
        const lists = constraints
          .filter((k) => k.kind === 'c' && k.columns.length === 1 && k.columns[0] === want.column)
          .map((k) => [...k.definition.matchAll(/'((?:[^']|'')*)'/g)].map((m) => m[1].replace(/''/g, "'")))
          .filter((values) => values.length > 0);
        const wanted = [...want.values].sort().join(', ');
        if (lists.length === 0) problems.push(`${at} has no CHECK listing the values ${want.values.join(', ')}`);
        for (const values of lists) {
          if (values.sort().join(', ') !== wanted) problems.push(`${at} has a CHECK allowing ${values.join(', ')}, expected ${wanted}`);
        }
      }
      if (want.references) {
        const pairs = (k: ConstraintRow) => k.columns.map((c, i) => `${c}→${k.targetColumns?.[i]}`);
        const found = constraints.some(
          (k) =>
            k.kind === 'f' &&
            k.target === want.references &&
            pairs(k).includes(`${want.column}→id`) &&
            pairs(k).includes('workspace_id→workspace_id'),
        );
        if (!found) problems.push(`${at} has no foreign key (workspace_id, ${want.column}) → ${want.references} (workspace_id, id)`);
      }
    }
    for (const got of actual.values()) {
      if (!seen.has(got.column)) {
        problems.push(
          `${object.plural}: column ${table}.${got.column} (${got.formatted}) is neither declared by a field nor a system column`,
        );
      }
    }
  }
  return problems;
}
