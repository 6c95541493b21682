import { describe, expect, it } from '@jest/globals';
import { companySchema, personSchema } from '../schemas.js';
import { parseFilter } from './filter.js';
import { castFor, compileFilter, compileKeyset, compileOrderBy, escapeLike, orderWithTieBreaker } from './sql.js';
import { DIRECTIONS, type CursorPayload, type Direction, type FieldDef, type ObjectSchema, type OrderTerm } from './types.js';

const ID = '6f1b1f6e-8c9a-4c2e-9d8f-0a1b2c3d4e5f';
const TS = '2024-01-01T00:00:00.000Z';

function filterSql(raw: string, schema: ObjectSchema = personSchema): [string, unknown[]] {
  const params: unknown[] = ['workspace'];
  return [compileFilter(parseFilter(raw, schema)!, schema, params), params.slice(1)];
}

describe('castFor', () => {
  it('casts by field type', () => {
    expect(castFor('uuid')).toBe('::uuid');
    expect(castFor('timestamp')).toBe('::timestamptz');
    expect(castFor('text')).toBe('::text');
    expect(castFor('textArray')).toBe('::jsonb');
  });
});

describe('compileFilter', () => {
  it('numbers placeholders after the caller’s params', () => {
    expect(filterSql('name.firstName[eq]:"Ada"')).toEqual(['t.first_name = $2::text', ['Ada']]);
  });

  it.each([
    ['gt', '>'],
    ['gte', '>='],
    ['lt', '<'],
    ['lte', '<='],
  ])('compiles %s as %s with the type’s cast', (op, sql) => {
    expect(filterSql(`createdAt[${op}]:2024-01-01`)).toEqual([`t.created_at ${sql} $2::timestamptz`, ['2024-01-01T00:00:00Z']]);
  });

  it('lets neq match NULLs', () => {
    expect(filterSql(`companyId[neq]:${ID}`)).toEqual([`(t.company_id <> $2::uuid OR t.company_id IS NULL)`, [ID]]);
  });

  it('compiles in as = ANY of a typed array', () => {
    expect(filterSql(`id[in]:["${ID}"]`)).toEqual(['t.id = ANY($2::uuid[])', [[ID]]]);
    expect(filterSql('name.lastName[in]:["a","b"]')).toEqual(['t.last_name = ANY($2::text[])', [['a', 'b']]]);
    expect(filterSql('createdAt[in]:["2024-01-01"]')).toEqual(['t.created_at = ANY($2::timestamptz[])', [['2024-01-01T00:00:00Z']]]);
  });

  it('compiles is without parameters', () => {
    expect(filterSql('deletedAt[is]:NULL')).toEqual(['t.deleted_at IS NULL', []]);
    expect(filterSql('companyId[is]:NOT_NULL')).toEqual(['t.company_id IS NOT NULL', []]);
  });

  it('escapes LIKE wildcards in startsWith and endsWith', () => {
    expect(escapeLike(String.raw`50%_a\b`)).toBe(String.raw`50\%\_a\\b`);
    expect(filterSql(String.raw`emails.primaryEmail[startsWith]:"a_b%\\"`)).toEqual([
      't.primary_email LIKE $2::text',
      [String.raw`a\_b\%\\%`],
    ]);
    expect(filterSql('emails.primaryEmail[endsWith]:"@acme.com"')).toEqual(['t.primary_email LIKE $2::text', ['%@acme.com']]);
  });

  it('passes like and ilike patterns as given', () => {
    expect(filterSql('name.lastName[like]:"B_r%"')).toEqual(['t.last_name LIKE $2::text', ['B_r%']]);
    expect(filterSql('name.lastName[ilike]:"%by%"')).toEqual(['t.last_name ILIKE $2::text', ['%by%']]);
  });

  it('compiles textArray containsAny and is (an empty array counts as NULL)', () => {
    expect(filterSql('emails.additionalEmails[containsAny]:["a@b.co","c@d.co"]')).toEqual([
      't.additional_emails ?| $2::text[]',
      [['a@b.co', 'c@d.co']],
    ]);
    expect(filterSql('emails.additionalEmails[is]:NULL')).toEqual([
      "(t.additional_emails IS NULL OR t.additional_emails = '[]'::jsonb)",
      [],
    ]);
    expect(filterSql('emails.additionalEmails[is]:NOT_NULL')).toEqual([
      "(t.additional_emails IS NOT NULL AND t.additional_emails <> '[]'::jsonb)",
      [],
    ]);
  });

  it('nests and, or, not with parentheses, parameters in reading order', () => {
    expect(filterSql('name.firstName[eq]:"a",or(name.lastName[eq]:"b",not(companyId[is]:NULL)),createdAt[lt]:2024-02-01')).toEqual([
      '(t.first_name = $2::text AND (t.last_name = $3::text OR NOT (t.company_id IS NULL)) AND t.created_at < $4::timestamptz)',
      ['a', 'b', '2024-02-01T00:00:00Z'],
    ]);
  });

  it('never puts values in the SQL text', () => {
    const [sql, params] = filterSql(`name.firstName[eq]:"x'); DROP TABLE people; --"`);
    expect(sql).toBe('t.first_name = $2::text');
    expect(params).toEqual([`x'); DROP TABLE people; --`]);
  });

  it('uses company columns', () => {
    expect(filterSql('domainName.primaryLinkUrl[ilike]:"%acme%"', companySchema)).toEqual([
      't.domain_primary_link_url ILIKE $2::text',
      ['%acme%'],
    ]);
  });

  it('refuses nodes the parser would not produce', () => {
    const params: unknown[] = [];
    expect(() => compileFilter({ kind: 'cond', field: 'nope', op: 'eq', value: 'x' }, personSchema, params)).toThrow(
      'people has no field nope',
    );
    expect(() => compileFilter({ kind: 'cond', field: 'id', op: 'in', value: ID }, personSchema, params)).toThrow('needs an array');
    expect(() => compileFilter({ kind: 'cond', field: 'id', op: 'eq', value: [ID] }, personSchema, params)).toThrow('needs a single value');
    expect(compileFilter({ kind: 'and', children: [] }, personSchema, params)).toBe('TRUE');
    expect(compileFilter({ kind: 'or', children: [] }, personSchema, params)).toBe('FALSE');
  });
});

describe('orderWithTieBreaker', () => {
  it('appends id with the Asc/Desc of the last term', () => {
    expect(orderWithTieBreaker([{ field: 'createdAt', direction: 'AscNullsFirst' }])).toEqual([
      { field: 'createdAt', direction: 'AscNullsFirst' },
      { field: 'id', direction: 'AscNullsLast' },
    ]);
    expect(
      orderWithTieBreaker([
        { field: 'createdAt', direction: 'AscNullsFirst' },
        { field: 'name', direction: 'DescNullsFirst' },
      ]).at(-1),
    ).toEqual({
      field: 'id',
      direction: 'DescNullsLast',
    });
  });

  it('leaves an order that has id alone, and does not mutate', () => {
    const order: OrderTerm[] = [
      { field: 'id', direction: 'DescNullsFirst' },
      { field: 'name', direction: 'AscNullsLast' },
    ];
    expect(orderWithTieBreaker(order)).toEqual(order);
    expect(orderWithTieBreaker(order)).not.toBe(order);
    expect(orderWithTieBreaker([])).toEqual([{ field: 'id', direction: 'AscNullsLast' }]);
  });
});

describe('compileOrderBy', () => {
  const order = (...terms: [string, Direction][]): OrderTerm[] => terms.map(([field, direction]) => ({ field, direction }));

  it('renders each direction; id gets no NULLS clause', () => {
    expect(compileOrderBy(order(['createdAt', 'AscNullsFirst'], ['id', 'AscNullsLast']), companySchema)).toBe(
      't.created_at ASC NULLS FIRST, t.id ASC',
    );
    expect(
      compileOrderBy(
        order(['name.lastName', 'AscNullsLast'], ['name.firstName', 'DescNullsFirst'], ['createdAt', 'DescNullsLast']),
        personSchema,
      ),
    ).toBe('t.last_name ASC NULLS LAST, t.first_name DESC NULLS FIRST, t.created_at DESC NULLS LAST, t.id DESC');
  });

  it('adds the tie-breaker when missing', () => {
    expect(compileOrderBy(order(['createdAt', 'DescNullsLast']), companySchema)).toBe('t.created_at DESC NULLS LAST, t.id DESC');
  });

  it('reverses every direction and nulls placement', () => {
    expect(compileOrderBy(order(['createdAt', 'AscNullsFirst']), companySchema, true)).toBe('t.created_at DESC NULLS LAST, t.id DESC');
    expect(compileOrderBy(order(['name', 'DescNullsLast'], ['deletedAt', 'AscNullsLast']), companySchema, true)).toBe(
      't.name ASC NULLS FIRST, t.deleted_at DESC NULLS FIRST, t.id DESC',
    );
  });
});

// Text columns (a nullable, b not null), timestamps (ts not null, tn nullable), id.
const leaf = (path: string, type: FieldDef['type'], nullable: boolean): FieldDef => ({
  path,
  column: path,
  type,
  nullable,
  sortable: true,
});
const things: ObjectSchema = {
  name: 'things',
  table: 'things',
  fields: Object.fromEntries(
    [
      leaf('id', 'uuid', false),
      leaf('a', 'text', true),
      leaf('b', 'text', false),
      leaf('ts', 'timestamp', false),
      leaf('tn', 'timestamp', true),
    ].map((f) => [f.path, f]),
  ),
  compositeSort: {},
};

function keyset(order: OrderTerm[], cursor: CursorPayload, side: 'after' | 'before', inclusive = false): [string, unknown[]] {
  const params: unknown[] = [];
  return [compileKeyset(order, things, cursor, params, side, inclusive), params];
}

describe('compileKeyset: SQL', () => {
  const byTs = (direction: Direction): OrderTerm[] => [{ field: 'ts', direction }];
  const byA = (direction: Direction): OrderTerm[] => [{ field: 'a', direction }];

  it('uses one row comparison on NOT NULL columns running one way', () => {
    const cur = { values: [TS], id: ID };
    expect(keyset(byTs('AscNullsFirst'), cur, 'after')).toEqual(['(t.ts, t.id) > ($1::timestamptz, $2::uuid)', [TS, ID]]);
    expect(keyset(byTs('AscNullsLast'), cur, 'before')).toEqual(['(t.ts, t.id) < ($1::timestamptz, $2::uuid)', [TS, ID]]);
    expect(keyset(byTs('DescNullsFirst'), cur, 'after', true)).toEqual(['(t.ts, t.id) <= ($1::timestamptz, $2::uuid)', [TS, ID]]);
    expect(keyset(byTs('DescNullsLast'), cur, 'before', true)).toEqual(['(t.ts, t.id) >= ($1::timestamptz, $2::uuid)', [TS, ID]]);
    expect(keyset([], { values: [], id: ID }, 'after')).toEqual(['(t.id) > ($1::uuid)', [ID]]);
    expect(
      keyset(
        [
          { field: 'b', direction: 'DescNullsFirst' },
          { field: 'ts', direction: 'DescNullsLast' },
        ],
        { values: ['x', TS], id: ID },
        'after',
      ),
    ).toEqual(['(t.b, t.ts, t.id) < ($1::text, $2::timestamptz, $3::uuid)', ['x', TS, ID]]);
  });

  it('expands with a leading bound when directions differ', () => {
    const order: OrderTerm[] = [
      { field: 'ts', direction: 'AscNullsFirst' },
      { field: 'id', direction: 'DescNullsLast' },
    ];
    expect(keyset(order, { values: [TS], id: ID }, 'after')).toEqual([
      '(t.ts >= $1::timestamptz AND (t.ts > $1::timestamptz OR (t.ts = $1::timestamptz AND t.id < $2::uuid)))',
      [TS, ID],
    ]);
  });

  // A nullable column under each direction, cursor value non-null then NULL.
  it.each<[Direction, 'after' | 'before', string]>([
    ['AscNullsFirst', 'after', '(t.a > $1::text OR (t.a = $1::text AND t.id > $2::uuid))'],
    ['AscNullsLast', 'after', '((t.a > $1::text OR t.a IS NULL) OR (t.a = $1::text AND t.id > $2::uuid))'],
    ['DescNullsFirst', 'after', '(t.a < $1::text OR (t.a = $1::text AND t.id < $2::uuid))'],
    ['DescNullsLast', 'after', '((t.a < $1::text OR t.a IS NULL) OR (t.a = $1::text AND t.id < $2::uuid))'],
    ['AscNullsFirst', 'before', '((t.a < $1::text OR t.a IS NULL) OR (t.a = $1::text AND t.id < $2::uuid))'],
    ['DescNullsLast', 'before', '(t.a > $1::text OR (t.a = $1::text AND t.id > $2::uuid))'],
  ])('value, %s, %s', (direction, side, sql) => {
    expect(keyset(byA(direction), { values: ['m'], id: ID }, side)).toEqual([sql, ['m', ID]]);
  });

  it.each<[Direction, 'after' | 'before', string]>([
    ['AscNullsFirst', 'after', '(t.a IS NOT NULL OR (t.a IS NULL AND t.id > $1::uuid))'],
    ['AscNullsLast', 'after', '((t.a IS NULL AND t.id > $1::uuid))'],
    ['DescNullsFirst', 'after', '(t.a IS NOT NULL OR (t.a IS NULL AND t.id < $1::uuid))'],
    ['DescNullsLast', 'after', '((t.a IS NULL AND t.id < $1::uuid))'],
    ['AscNullsFirst', 'before', '((t.a IS NULL AND t.id < $1::uuid))'],
    ['AscNullsLast', 'before', '(t.a IS NOT NULL OR (t.a IS NULL AND t.id < $1::uuid))'],
  ])('NULL, %s, %s', (direction, side, sql) => {
    expect(keyset(byA(direction), { values: [null], id: ID }, side)).toEqual([sql, [ID]]);
  });

  it('inclusive adds the position itself', () => {
    expect(keyset(byA('AscNullsLast'), { values: [null], id: ID }, 'after', true)).toEqual([
      '((t.a IS NULL AND t.id > $1::uuid) OR (t.a IS NULL AND t.id = $1::uuid))',
      [ID],
    ]);
  });

  it('drops the disjunct of a NULLS LAST term whose cursor value is NULL', () => {
    expect(
      keyset(
        [
          { field: 'id', direction: 'AscNullsLast' },
          { field: 'a', direction: 'AscNullsLast' },
        ],
        { values: [null], id: ID },
        'after',
      ),
    ).toEqual(['(t.id > $1::uuid)', [ID]]);
  });

  it('refuses a cursor that does not fit the order', () => {
    expect(() => keyset(byA('AscNullsLast'), { values: [], id: ID }, 'after')).toThrow('cursor has 0 values for 1 order terms');
    expect(() => keyset(byA('AscNullsLast'), { values: ['a', 'b'], id: ID }, 'after')).toThrow('cursor has 2 values for 1 order terms');
  });
});

/*
 * Property test: a small evaluator of the SQL subset these builders emit (comparisons,
 * IS [NOT] NULL, row comparisons, AND/OR/NOT with SQL's three-valued logic) checks, on
 * random rows full of NULLs and ties, that compileKeyset selects exactly the rows a JS
 * sort by the same order puts after/before the cursor, and that compileOrderBy sorts the same way.
 */
type Row = Record<string, string | null>;
type Tri = boolean | null;

const tokenized = new Map<string, string[]>();
function tokenize(sql: string): string[] {
  let tokens = tokenized.get(sql);
  if (!tokens) {
    tokens = sql.match(/\$\d+::[a-z]+(?:\[\])?|t\.[a-z_]+|>=|<=|<>|[()=<>,]|[A-Z]+/g) ?? [];
    if (tokens.join('') !== sql.replace(/\s/g, '')) throw new Error(`cannot evaluate ${sql}`);
    tokenized.set(sql, tokens);
  }
  return tokens;
}

function evaluate(sql: string, params: unknown[], row: Row): Tri {
  const tokens = tokenize(sql);
  let i = 0;
  const peek = () => tokens[i];
  const take = (expected?: string) => {
    const token = tokens[i++];
    if (expected !== undefined && token !== expected) throw new Error(`expected ${expected}, got ${token} in ${sql}`);
    return token;
  };
  const isOperand = (token: string | undefined) => token !== undefined && (token.startsWith('t.') || token.startsWith('$'));
  const operand = (): string | null => {
    const token = take();
    if (token.startsWith('t.')) return row[token.slice(2)];
    return params[Number(/^\$(\d+)/.exec(token)![1]) - 1] as string | null;
  };
  const cmp = (a: string | null, op: string, b: string | null): Tri => {
    if (a === null || b === null) return null;
    const c = a < b ? -1 : a > b ? 1 : 0;
    return { '=': c === 0, '<>': c !== 0, '<': c < 0, '<=': c <= 0, '>': c > 0, '>=': c >= 0 }[op]!;
  };
  const rowCmp = (l: (string | null)[], op: string, r: (string | null)[]): Tri => {
    for (let k = 0; k < l.length; k++) {
      if (l[k] === null || r[k] === null) return null;
      if (l[k] !== r[k]) return cmp(l[k], op, r[k]);
    }
    return op.includes('=');
  };
  const and = (a: Tri, b: Tri): Tri => (a === false || b === false ? false : a === null || b === null ? null : true);
  const or = (a: Tri, b: Tri): Tri => (a === true || b === true ? true : a === null || b === null ? null : false);

  const orExpr = (): Tri => {
    let v = andExpr();
    while (peek() === 'OR') {
      take();
      v = or(v, andExpr());
    }
    return v;
  };
  const andExpr = (): Tri => {
    let v = unary();
    while (peek() === 'AND') {
      take();
      v = and(v, unary());
    }
    return v;
  };
  const unary = (): Tri => {
    if (peek() === 'NOT') {
      take();
      const v = unary();
      return v === null ? null : !v;
    }
    return primary();
  };
  const suffix = (left: string | null): Tri => {
    if (peek() === 'IS') {
      take();
      const not = peek() === 'NOT' && take() !== undefined;
      take('NULL');
      return (left === null) !== not;
    }
    const op = take();
    return cmp(left, op, operand());
  };
  const primary = (): Tri => {
    const token = peek();
    if (token === 'TRUE' || token === 'FALSE') return take() === 'TRUE';
    if (token === '(' && isOperand(tokens[i + 1]) && (tokens[i + 2] === ',' || tokens[i + 2] === ')')) {
      const list = () => {
        take('(');
        const values = [operand()];
        while (peek() === ',') {
          take();
          values.push(operand());
        }
        take(')');
        return values;
      };
      const left = list();
      const op = take();
      return rowCmp(left, op, list());
    }
    if (token === '(') {
      take();
      const v = orExpr();
      take(')');
      return v;
    }
    return suffix(operand());
  };
  const result = orExpr();
  if (i !== tokens.length) throw new Error(`trailing tokens in ${sql}`);
  return result;
}

/** ORDER BY semantics straight from the Direction names. */
function compareBy(order: OrderTerm[]) {
  return (x: Row, y: Row): number => {
    for (const { field, direction } of order) {
      const a = x[field];
      const b = y[field];
      if (a === b) continue;
      if (a === null || b === null) return (a === null) === direction.endsWith('NullsFirst') ? -1 : 1;
      return (a < b ? -1 : 1) * (direction.startsWith('Asc') ? 1 : -1);
    }
    return 0;
  };
}

/** ORDER BY semantics read back from compileOrderBy's SQL (Postgres defaults when NULLS is omitted). */
function compareBySql(orderBy: string) {
  const terms = orderBy.split(', ').map((term) => {
    const [, col, dir, nulls] = /^t\.(\w+) (ASC|DESC)(?: NULLS (FIRST|LAST))?$/.exec(term)!;
    const nullsFirst = nulls ? nulls === 'FIRST' : dir === 'DESC';
    return { field: col, direction: `${dir === 'ASC' ? 'Asc' : 'Desc'}Nulls${nullsFirst ? 'First' : 'Last'}` as Direction };
  });
  return compareBy(terms);
}

function random(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

describe('compileKeyset: property', () => {
  it('agrees with a JS sort on random rows, orders, cursors and sides', () => {
    const rnd = random(42);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    const domains: Record<string, (string | null)[]> = {
      a: [null, 'a', 'b', 'c'],
      b: ['a', 'b', 'c'],
      ts: ['2024-01-01T00:00:00.000Z', '2024-01-02T00:00:00.000Z'],
      tn: [null, '2024-01-01T00:00:00.000Z', '2024-01-02T00:00:00.000Z'],
    };
    const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
    const paths = { rowComparison: 0, expansion: 0 };

    for (let trial = 0; trial < 400; trial++) {
      const fields = Object.keys(domains)
        .sort(() => rnd() - 0.5)
        .slice(0, 1 + Math.floor(rnd() * 3));
      const order: OrderTerm[] = fields.map((field) => ({ field, direction: pick(DIRECTIONS) }));
      if (rnd() < 0.2) order.splice(Math.floor(rnd() * (order.length + 1)), 0, { field: 'id', direction: pick(DIRECTIONS) });
      const full = orderWithTieBreaker(order);
      const valueFields = full.filter((t) => t.field !== 'id').map((t) => t.field);
      const ids = Array.from({ length: 30 }, (_, n) => n).sort(() => rnd() - 0.5);
      const rows: Row[] = Array.from({ length: 12 }, (_, n) => ({
        id: uuid(ids[n] * 2), // even ids: a cursor may sit between rows on odd ones
        ...Object.fromEntries(Object.entries(domains).map(([f, d]) => [f, pick(d)])),
      }));

      const compare = compareBy(full);
      const sorted = [...rows].sort(compare);
      expect(rows.slice().sort(compareBySql(compileOrderBy(order, things)))).toEqual(sorted);
      expect(rows.slice().sort(compareBySql(compileOrderBy(order, things, true)))).toEqual(sorted.slice().reverse());

      // Cursors on existing rows and on positions no row occupies.
      const cursors: Row[] = [
        ...rows,
        ...Array.from({ length: 4 }, () => ({
          id: uuid(Math.floor(rnd() * 30) * 2 + 1),
          ...Object.fromEntries(Object.entries(domains).map(([f, d]) => [f, pick(d)])),
        })),
      ];
      for (const at of cursors) {
        const cursor = { values: valueFields.map((f) => at[f]), id: at.id! };
        for (const side of ['after', 'before'] as const) {
          for (const inclusive of [false, true]) {
            const [sql, params] = keyset(order, cursor, side, inclusive);
            paths[sql.includes(' OR ') || sql === 'FALSE' ? 'expansion' : 'rowComparison']++;
            const expected = sorted.filter((row) => {
              const c = compare(row, at);
              return (side === 'after' ? c > 0 : c < 0) || (inclusive && c === 0);
            });
            const actual = sorted.filter((row) => evaluate(sql, params, row) === true);
            if (actual.length !== expected.length || actual.some((row, k) => row !== expected[k])) {
              expect({ order, cursor, side, inclusive, sql, ids: actual.map((r) => r.id) }).toEqual({
                order,
                cursor,
                side,
                inclusive,
                sql,
                ids: expected.map((r) => r.id),
              });
            }
          }
        }
      }
    }
    expect(paths.rowComparison).toBeGreaterThan(100);
    expect(paths.expansion).toBeGreaterThan(100);
  });
});
