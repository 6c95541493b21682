import pg from 'pg';

/**
 * A statement with its `$n` parameters written in as literals, for the one statement that
 * takes no parameters: `COPY (SELECT …) TO STDOUT` (PostgreSQL docs, COPY: the query is
 * not prepared, so it cannot be bound). The statements come from our own SQL builders,
 * which keep every value out of the text (libs/records/src/query/sql.ts); here each value
 * becomes a quoted literal (libpq's PQescapeLiteral rules, node-postgres's escapeLiteral):
 * a string, or an array of strings as `ARRAY['a', 'b']`. The cast each builder writes after
 * its placeholder (`$2::uuid[]`) still applies. Anything else is refused rather than guessed.
 *
 * `$n` is recognised only outside quoted literals, quoted identifiers and comments, so a
 * literal that the builders write themselves (`custom->>'tier'`) is never touched.
 */
export function inlineParams(sql: string, params: readonly unknown[]): string {
  let out = '';
  let i = 0;
  const used = new Set<number>();
  while (i < sql.length) {
    const c = sql[i];
    const skipTo = (end: number) => {
      out += sql.slice(i, end);
      i = end;
    };
    if (c === "'" || c === '"') {
      skipTo(closingQuote(sql, i, c === "'" && /[eE]/.test(sql[i - 1] ?? '') && !/\w/.test(sql[i - 2] ?? '')));
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      skipTo(end < 0 ? sql.length : end);
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) throw new Error('inlineParams: unterminated comment');
      skipTo(end + 2);
    } else if (c === '$' && /\d/.test(sql[i + 1] ?? '') && !/[\w$]/.test(sql[i - 1] ?? '')) {
      const digits = /^\d+/.exec(sql.slice(i + 1))![0];
      const index = Number(digits);
      if (index < 1 || index > params.length) throw new Error(`inlineParams: $${digits} has no value (${params.length} given)`);
      out += literal(params[index - 1], index);
      used.add(index);
      i += 1 + digits.length;
    } else if (c === '$') {
      throw new Error('inlineParams: dollar-quoted text is not supported');
    } else {
      out += c;
      i++;
    }
  }
  if (used.size !== params.length) throw new Error(`inlineParams: ${params.length - used.size} of ${params.length} values are not used`);
  return out;
}

/** The index just past the quote that closes the one at `start` (`''`/`""` doubled inside; backslashes escape in E'…'). */
function closingQuote(sql: string, start: number, backslashes: boolean): number {
  const quote = sql[start];
  for (let i = start + 1; i < sql.length; i++) {
    if (backslashes && sql[i] === '\\') i++;
    else if (sql[i] === quote) {
      if (sql[i + 1] === quote) i++;
      else return i + 1;
    }
  }
  throw new Error('inlineParams: unterminated quoted text');
}

function literal(value: unknown, index: number): string {
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return `ARRAY[${value.map(text).join(', ')}]`;
  throw new Error(`inlineParams: $${index} is neither a string nor an array of strings`);
}

function text(value: string): string {
  // Postgres text cannot hold NUL; the filter parser refuses it before this.
  if (value.includes('\u0000')) throw new Error('inlineParams: a value holds NUL');
  return pg.escapeLiteral(value);
}
