import { z } from 'zod';
import { columnLeaf, columnOf, enumOf, leaf, jsonOf, MAX_OPTIONS, valuesOf, wrongType } from './shared.js';
import type { FieldType } from './types.js';

/** MULTI_SELECT: a list of the field's options (no value is `[]`), filtered with containsAny, not sorted. */
export const multiSelect: FieldType = {
  name: 'MULTI_SELECT',
  word: 'an array of options',
  pageWord: 'several of your options',
  options: 'many',
  check(field, value, path, problems) {
    if (!Array.isArray(value) || value.length > MAX_OPTIONS) return wrongType(multiSelect, field, path, problems);
    const allowed = valuesOf(multiSelect, field);
    const unknown = value.filter((v) => typeof v !== 'string' || !allowed.includes(v));
    if (unknown.length)
      problems.push(`${path} holds values that are not options (${allowed.join(', ')}): ${JSON.stringify(unknown).slice(0, 120)}`);
    return [...new Set(value as string[])];
  },
  empty: () => [],
  shown: (value) => value,
  leaves: (field) => [leaf(field, { type: 'textArray', sql: `(${jsonOf(field)})`, sortable: false, values: valuesOf(multiSelect, field) })],
  columnLeaves: (field) => [columnLeaf(field, { type: 'textArray', sortable: false, values: valuesOf(multiSelect, field) })],
  storedColumns: (field) => [columnOf(field)],
  recordSource: (field, read) => `(${read(columnOf(field))} ?? [])`,
  writeColumns(field, value, columns) {
    columns[columnOf(field)] = JSON.stringify(value ?? []);
  },
  graphql(field, typeName) {
    const values = enumOf(multiSelect, field, typeName);
    const filter = `${values.name}ListFilter`;
    const sdl = {
      [values.name]: values.sdl,
      [filter]: `input ${filter} { "Matches when the list holds at least one of these values." containsAny: [${values.name}!] "An empty list counts as NULL." is: FilterIs }`,
    };
    return { output: `[${values.name}!]`, input: `[${values.name}!]`, filter, sdl };
  },
  jsonSchema: (field) => ({ type: 'array', items: { type: 'string', enum: valuesOf(multiSelect, field) } }),
  mcpInput: (field) => z.array(z.enum(valuesOf(multiSelect, field) as [string, ...string[]])),
  mcpOutput: () => z.array(z.string()),
  csv: [{ cell: 'json' }],
};
