import { BadInputError } from '#errors/errors.js';
import type { CustomField } from '#records/objects/index.js';
import { editFieldBody, editFieldValues, newFieldBody, newFieldValues, pageMessages } from './data-model.form.js';

const TIER: CustomField = {
  id: '00000000-0000-4000-8000-000000000001',
  object: 'companies',
  name: 'tier',
  label: 'Tier',
  description: null,
  type: 'SELECT',
  isNullable: true,
  defaultValue: null,
  isUnique: false,
  options: [
    { value: 'GOLD', label: 'Gold', color: 'yellow', position: 0 },
    { value: 'SILVER', label: 'Silver', color: null, position: 1 },
  ],
  settings: null,
  isActive: true,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

/** The edit form as the browser sends it, untouched: hidden values, labels, colors, three empty rows. */
const untouched = {
  label: 'Tier',
  description: '',
  isNullable: 'on',
  optionValue: ['GOLD', 'SILVER'],
  optionLabel: ['Gold', 'Silver'],
  optionColor: ['yellow', ''],
  newValue: ['', '', ''],
  newLabel: ['', '', ''],
};

describe('the data model forms', () => {
  it('reads the add form: one option per line as VALUE|Label, blank lines skipped, empty label and description left out', () => {
    const values = newFieldValues({
      object: 'companies',
      name: ' tier ',
      label: '',
      description: '',
      type: 'SELECT',
      options: 'GOLD|Gold\r\n\r\n SILVER | Silver \nBRONZE\n',
      isNullable: 'on',
    });
    const { body, optionNames } = newFieldBody(values);
    expect(body).toEqual({
      object: 'companies',
      name: 'tier',
      type: 'SELECT',
      isNullable: true,
      options: [
        { value: 'GOLD', label: 'Gold', color: null, position: 0 },
        { value: 'SILVER', label: 'Silver', color: null, position: 1 },
        { value: 'BRONZE', color: null, position: 2 },
      ],
    });
    expect(optionNames).toEqual(['line 1', 'line 3', 'line 4']);
    // An unticked checkbox is not sent: the field may then not be empty.
    expect(newFieldBody(newFieldValues({ object: 'people', name: 'age', type: 'NUMBER' })).body).toEqual({
      object: 'people',
      name: 'age',
      type: 'NUMBER',
      isNullable: false,
    });
  });

  it('says in the form words what is wrong with the options box', () => {
    const select = (options: string) => () => newFieldBody(newFieldValues({ object: 'companies', name: 'tier', type: 'SELECT', options }));
    expect(select('\n  \n')).toThrow(/a SELECT field needs at least one option, one per line as VALUE\|Label/);
    expect(select('GOLD|Gold|yellow')).toThrow(BadInputError);
    expect(select('GOLD|Gold|yellow')).toThrow(/options, line 1: write VALUE\|Label/);
    expect(pageMessages(['options[1].label must be at most 100 characters', 'name is wrong'], ['line 1', 'line 3'])).toEqual([
      'options, line 3: label must be at most 100 characters',
      'name is wrong',
    ]);
  });

  it('says values the rule refuses once, naming each line and value, instead of the pattern once per line', () => {
    const rule = (i: number) => `options[${i}].value must match ^[A-Z][A-Z0-9_]*$ (capitals, digits, _; at most 63), as in "GOLD"`;
    const advice = 'a value is capitals, digits and _, starting with a capital, as in GOLD (at most 63 characters)';
    expect(pageMessages([rule(1)], ['line 1', 'line 3'], ['GOLD', 'silver'])).toEqual([
      `options, line 3: "silver" is not an option value: ${advice}`,
    ]);
    expect(
      pageMessages(
        [rule(0), 'options[1].value "GOLD" appears twice', rule(2), rule(3), 'name is wrong'],
        ['line 1', 'line 2', 'line 4', 'line 5'],
        ['gold', 'GOLD', 'x y', 'z'.repeat(63).toLowerCase()],
      ),
    ).toEqual([
      `options, lines 1, 4 and 5: "gold", "x y" and "${'z'.repeat(39)}…" are not option values: ${advice}`,
      'options, line 2: value "GOLD" appears twice',
      'name is wrong',
    ]);
    // The field's page names its rows its own way.
    expect(pageMessages([rule(0), rule(1)], ['new option 1', 'new option 3'], ['a', 'b'])).toEqual([
      `options, new options 1 and 3: "a" and "b" are not option values: ${advice}`,
    ]);
    expect(pageMessages([rule(0), rule(1)], ['option GOLD', 'new option 1'], ['gold', 'b'])[0]).toMatch(
      /^options, option GOLD and new option 1: /,
    );
  });

  it('sends only what changed on the edit form, so an untouched form writes nothing', () => {
    expect(editFieldBody(TIER, editFieldValues(TIER, untouched)).body).toEqual({});
    const { body, optionNames } = editFieldBody(
      TIER,
      editFieldValues(TIER, {
        ...untouched,
        label: 'Customer tier',
        description: 'Bought with the contract',
        isNullable: undefined,
        optionLabel: ['Gold plus', 'Silver'],
        optionRemove: 'SILVER',
        newValue: ['', 'PLATINUM', ''],
        newLabel: ['', '', ''],
      }),
    );
    expect(body).toEqual({
      label: 'Customer tier',
      description: 'Bought with the contract',
      isNullable: false,
      options: [
        { value: 'GOLD', label: 'Gold plus', color: 'yellow', position: 0 },
        { value: 'PLATINUM', color: null, position: 1 },
      ],
    });
    expect(optionNames).toEqual(['option GOLD', 'new option 2']);
  });

  it('keeps at least one option, and ignores rows for options the field does not have', () => {
    const all = editFieldValues(TIER, { ...untouched, optionRemove: ['GOLD', 'SILVER'] });
    expect(() => editFieldBody(TIER, all)).toThrow(/keeps at least one option/);
    const forged = editFieldValues(TIER, { ...untouched, optionValue: ['GOLD', 'SILVER', 'FORGED'], optionLabel: ['Gold', 'Silver', 'X'] });
    expect(forged.options.map((o) => o.value)).toEqual(['GOLD', 'SILVER', '', '', '']);
  });
});
