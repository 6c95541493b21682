import { BadInputError, ErrorCode } from '#errors/errors.js';
import { isSafeIntegerText } from '../query/filter.js';
import { fieldType, type CellKind as LeafCell } from '../field-types/index.js';
import { unguardedCell } from '../service/csv-formulas.js';
import type { ObjectDefinition } from '../service/object-definitions.js';

/** How a CSV cell becomes a JSON value before the record is checked as a REST body would be; `ignored`: it does not. */
export type CellKind = LeafCell | 'ignored';

/** Columns of an export that the API sets itself: a file may hold them (an export imports as it is), and they are not read. */
const SET_BY_THE_API = ['createdAt', 'updatedAt', 'deletedAt'];

/** A CSV column: the path it fills in the body (`domainName.primaryLinkUrl` → `["domainName", "primaryLinkUrl"]`). */
export interface ImportColumn {
  path: string[];
  kind: CellKind;
  /** A text column an export guards against formulas: its cell loses the `'` the export added (csv-formulas.ts). */
  guarded?: boolean;
}

/**
 * The columns a CSV may have for `def` (in a workspace, with its custom fields): `id`, each
 * scalar field by name, each composite sub-field as `field.subField` (`domainName.primaryLinkUrl`,
 * a custom `budget.amountMicros`); lists and multi-selects hold JSON text in their cell.
 * `createdAt`, `updatedAt` and `deletedAt` are taken and ignored.
 */
export function importColumns(def: ObjectDefinition): Map<string, ImportColumn> {
  const columns = new Map<string, ImportColumn>([['id', { path: ['id'], kind: 'text' }]]);
  // A standard field's cells are its type's, as a custom field's are.
  for (const field of [...def.declaration.fields, ...(def.custom ?? [])]) {
    for (const leaf of fieldType(field.type).csv) {
      const path = leaf.sub ? [field.name, leaf.sub] : [field.name];
      columns.set(path.join('.'), { path, kind: leaf.cell, guarded: !!leaf.guard });
    }
  }
  for (const name of SET_BY_THE_API) columns.set(name, { path: [name], kind: 'ignored' });
  return columns;
}

/**
 * The header row checked against the object's columns: every name known, none twice. A file
 * without a header row fails here too, its first record naming unknown columns.
 */
export function checkHeader(header: string[], def: ObjectDefinition): ImportColumn[] {
  const known = importColumns(def);
  if (header.length === 1 && header[0].trim() === '') {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'the first line must be the header row (field paths such as name); it is empty');
  }
  const problems: string[] = [];
  const seen = new Set<string>();
  const columns = header.map((raw) => {
    const name = raw.trim();
    if (seen.has(name)) problems.push(`column "${name.slice(0, 100)}" appears twice in the header row`);
    seen.add(name);
    const column = known.get(name);
    if (!column) problems.push(`unknown column "${name.slice(0, 100)}": not a field of ${def.object}`);
    return column!;
  });
  if (problems.length) {
    if (problems.length > 10) problems.splice(10, problems.length - 10, `and ${problems.length - 10} more`);
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      ...problems,
      `the header row names fields of ${def.object}: ${[...known.keys()].slice(0, 30).join(', ')}`,
    );
  }
  return columns;
}

/**
 * One CSV record as the body a REST create would take. An empty cell is a field left out.
 * A cell that cannot be the column's type is a problem of the row, with the column's name.
 */
export function recordBody(columns: ImportColumn[], cells: string[], problems: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) {
    const cell = cells[i];
    const column = columns[i];
    if (cell === undefined || cell === '' || column.kind === 'ignored') continue;
    let value: unknown = column.guarded ? unguardedCell(cell) : cell;
    switch (column.kind) {
      case 'integer':
        value = isSafeIntegerText(cell.trim()) ? Number(cell.trim()) : cell;
        break;
      case 'number': {
        const n = Number(cell.trim());
        value = cell.trim() !== '' && Number.isFinite(n) ? n : cell;
        break;
      }
      case 'boolean': {
        const word = cell.trim().toLowerCase();
        value = word === 'true' ? true : word === 'false' ? false : cell;
        break;
      }
      case 'json':
        try {
          value = JSON.parse(cell);
        } catch {
          problems.push(`${column.path.join('.')} must be JSON text (such as ["A","B"]); got ${JSON.stringify(cell.slice(0, 60))}`);
          continue;
        }
    }
    const [first, second] = column.path;
    if (second === undefined) body[first] = value;
    else ((body[first] ??= {}) as Record<string, unknown>)[second] = value;
  }
  return body;
}
