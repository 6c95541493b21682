import { BadInputError } from '#errors/errors.js';
import { fieldType } from '../field-types/index.js';
import { LINK, OBJECTS, type StandardField, type SubField } from '../objects/index.js';
import { definitionFor } from './object-definitions.js';
import { validateInput } from './validate-input.js';

/**
 * The fast check (input-fast-check.ts) must accept a body only when the input classes
 * (class-validator) accept it, and the columns written must be the same either way. Bodies
 * are generated from each object's declaration, mixing valid, borderline and wrong values
 * for every field kind, with a fixed seed so a failure reproduces.
 */

/** mulberry32: a small seeded generator. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const UUID = '0b6f1c1e-7f5a-4c3e-9a57-3f0f2a9d8e11';
const ODD = [5, 0, true, {}, [], null, '', 'a\u0000b', 1.5, -1];
const astral = (n: number) => '😀'.repeat(n); // n characters for MaxLength (surrogate pairs count once), 2n UTF-16 units

function textValues(maxLength: number): unknown[] {
  return ['a', 'Acme', 'x'.repeat(maxLength), 'x'.repeat(maxLength + 1), astral(maxLength), astral(maxLength + 1), '  ', 'é\u0301'];
}

function subValues(sub: SubField): unknown[] {
  switch (sub.kind) {
    case 'text':
      if (sub.format === 'email')
        return ['a@b.co', 'Ada.Lovelace@example.com', 'bad', 'a@b', `${'x'.repeat(64)}@example.com`, 'a@b.co\u0000', ' a@b.co'];
      if (sub.format === 'url')
        return [
          'acme.com',
          'https://acme.com/x',
          'http://a.b/c?d=e',
          'ftp://acme.com',
          'javascript:alert(1)',
          'http://',
          'localhost',
          `${'x'.repeat(3000)}.com`,
        ];
      if (sub.format === 'currency') return ['USD', 'EUR', 'usd', 'US', 'USDX', ' USD'];
      return textValues(sub.maxLength!);
    case 'bigint':
      return [0, 1, -5, 1.5, 2 ** 53, -(2 ** 53 - 1), 2 ** 53 - 1, '5', Infinity, NaN];
    case 'number':
      return [0, 1.5, -5, sub.min ?? -1e9, sub.max ?? 1e9, (sub.min ?? -1e9) - 1, (sub.max ?? 1e9) + 0.5, '5', Infinity, NaN];
    case 'textList':
      return [
        [],
        ['a@b.co'],
        ['a@b.co', 'c@d.org'],
        ['bad'],
        [1],
        [null],
        'a@b.co',
        Array.from({ length: sub.maxItems! + 1 }, (_, i) => `u${i}@x.io`),
      ];
    case 'linkList':
      return [
        [],
        [{ url: 'acme.com' }],
        [{ url: 'https://acme.com', label: null }],
        [{ url: 'acme.com', label: 'Home' }],
        [{ url: 'acme.com', label: 'x'.repeat(LINK.label.maxLength + 1) }],
        [{ url: 'acme.com', extra: 1 }],
        [{ label: 'x' }],
        [{ url: 'not a url' }],
        ['acme.com'],
        [null],
        [[]],
        Array.from({ length: sub.maxItems! + 1 }, (_, i) => ({ url: `s${i}.example.com` })),
      ];
  }
}

/** Values of each single-valued type the standard objects' fields have, by registry type. */
const VALUES_OF_TYPE: Record<string, (field: StandardField) => unknown[]> = {
  TEXT: (field) => textValues(field.settings!.maxLength!),
  SELECT: (field) => {
    const values = field.options!.map((o) => o.value);
    return [...values, 'nope', values[0].toLowerCase(), ` ${values[0]}`];
  },
  DATE_TIME: () => [
    '2026-01-01',
    '2026-12-31T12:00:00Z',
    '2026-12-31T12:00:00.123+02:00',
    'not a date',
    '2026-02-30',
    '2026-13-01',
    '12',
    123,
  ],
  RELATION: () => [UUID, UUID.toUpperCase(), '00000000-0000-0000-0000-000000000000', 'abc', `${UUID}x`],
};

function fieldValues(field: StandardField, rnd: () => number): unknown[] {
  const composite = fieldType(field.type).composite;
  if (!composite) return VALUES_OF_TYPE[field.type](field);
  {
    {
      const subs = composite.subFields;
      const one = () => {
        const value: Record<string, unknown> = {};
        for (const sub of subs) {
          const r = rnd();
          if (r < 0.3) continue;
          const pool = r < 0.9 ? subValues(sub) : ODD;
          value[sub.name] = pool[Math.floor(rnd() * pool.length)];
        }
        if (rnd() < 0.05) value.unknownSub = 'x';
        return value;
      };
      return [one(), one(), one(), one(), {}, 'str', JSON.parse('{"__proto__": {"x": 1}}')];
    }
  }
}

function body(plural: string, mode: 'create' | 'update', rnd: () => number): Record<string, unknown> {
  const object = OBJECTS.find((o) => o.plural === plural)!;
  const value: Record<string, unknown> = {};
  if (rnd() < 0.2) value.id = [UUID, 'abc', null, 5][Math.floor(rnd() * 4)];
  for (const field of object.fields) {
    const r = rnd();
    if (r < 0.25) continue;
    const pool = r < 0.92 ? fieldValues(field, rnd) : ODD;
    value[field.name] = pool[Math.floor(rnd() * pool.length)];
  }
  if (rnd() < 0.03) value.unknownField = 1;
  if (rnd() < 0.02) return { ...JSON.parse('{"__proto__": 1}'), ...value };
  return mode === 'update' && rnd() < 0.1 ? {} : value;
}

function classVerdict(plural: string, mode: 'create' | 'update', raw: unknown): { ok: true; columns: unknown } | { ok: false } {
  const def = definitionFor(plural);
  try {
    return { ok: true, columns: def.toColumns(validateInput(mode === 'create' ? def.createInput : def.updateInput, raw)) };
  } catch (err) {
    if (err instanceof BadInputError) return { ok: false };
    throw err;
  }
}

describe('the fast input check agrees with the input classes', () => {
  for (const object of OBJECTS) {
    for (const mode of ['create', 'update'] as const) {
      it(`${object.plural}, ${mode}: accepts exactly what class-validator accepts, with the same columns`, () => {
        const def = definitionFor(object.plural);
        const rnd = random(object.plural.length * 7919 + (mode === 'create' ? 1 : 2));
        let accepted = 0;
        const disagreements: unknown[] = [];
        for (let i = 0; i < 4000; i++) {
          const raw = body(object.plural, mode, rnd);
          // The body as it arrives over HTTP (JSON), so key order and own "__proto__" keys are as a client sends them.
          const parsed: unknown = JSON.parse(
            JSON.stringify(raw, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)),
          );
          for (const candidate of [raw, parsed]) {
            const fast = def.acceptsAsIs[mode](candidate);
            const verdict = classVerdict(object.plural, mode, candidate);
            if (fast !== verdict.ok) disagreements.push({ fast, body: candidate });
            else if (fast && verdict.ok) {
              accepted++;
              expect(def.toColumns(candidate as object)).toEqual(verdict.columns);
            }
          }
        }
        expect(disagreements.slice(0, 3)).toEqual([]);
        // Enough valid bodies among the generated ones that the comparison means something.
        expect(accepted).toBeGreaterThan(200);
      });
    }
  }

  it('takes the fast path for the usual creates (the bench bodies, and a person with a company)', () => {
    expect(definitionFor('companies').acceptsAsIs.create({ name: 'Acme', domainName: { primaryLinkUrl: 'https://acme.com' } })).toBe(true);
    expect(
      definitionFor('people').acceptsAsIs.create({
        name: { firstName: 'Ada', lastName: 'Lovelace' },
        emails: { primaryEmail: 'ada@example.com' },
        companyId: UUID,
      }),
    ).toBe(true);
    expect(definitionFor('companies').acceptsAsIs.update({ name: 'Acme 2' })).toBe(true);
  });

  it('leaves a body it cannot vouch for to the classes: unknown, reserved and non-enumerable keys, other prototypes', () => {
    const companies = definitionFor('companies').acceptsAsIs;
    expect(companies.create({ name: 'Acme', extra: 1 })).toBe(false);
    expect(companies.create(JSON.parse('{"name": "Acme", "__proto__": {"name": "x"}}'))).toBe(false);
    const hidden = { name: 'Acme' };
    Object.defineProperty(hidden, 'secret', { value: 1, enumerable: false });
    expect(companies.create(hidden)).toBe(false);
    expect(companies.create(Object.assign(new (class Body {})(), { name: 'Acme' }))).toBe(false);
    expect(companies.create(new Date())).toBe(false);
    expect(companies.create([{ name: 'Acme' }])).toBe(false);
    expect(companies.create({})).toBe(false); // name is required
  });
});
