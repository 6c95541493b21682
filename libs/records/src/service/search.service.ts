import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Principal } from '#auth/principal.js';
import { hasFieldRestrictions } from '#auth/field-access.js';
import { Sql } from '#database/sql.js';
import { ReadRouter } from '#database/read-routing.js';
import { BadInputError, ErrorCode, ForbiddenError } from '#errors/errors.js';
import { OBJECTS } from '../objects/index.js';
import { fieldType } from '../field-types/index.js';
import { DataModel } from './data-model.js';
import { labelOf, type AnyRecord, type ObjectDefinition } from './object-definitions.js';
import { RecordPolicy } from './record-policy.js';
import { scope, type ScopePrincipal } from '../query/scope.js';
import { RecordsService, type PageInfo } from './records.service.js';

/** The words of q ($1) as the index holds them: unaccented, lower case, runs of letters and digits (the search migration). */
export const WORDS_STATEMENT = `SELECT coalesce(tsvector_to_array(to_tsvector('simple', search_split(search_normalize($1)))), '{}') AS words`;

/**
 * The standard objects search reads, in the order results tie-break on (their plural names
 * sort the same way); a workspace's own objects come after them (SearchService.objectsFor).
 */
export const SEARCHABLE_OBJECTS: readonly string[] = OBJECTS.map((o) => o.plural);

/**
 * An object as the search statement reads it: its plural name, its table and, for a custom
 * object, its id (its records are the table's rows with it; libs/records/src/query/scope.ts).
 */
export interface SearchTarget {
  plural: string;
  table: string;
  objectId?: string;
}

/** The object's key in the lexicon (`search_words.object`): a standard object's table, a custom object's id (never its name). */
const lexiconKey = (o: SearchTarget) => o.objectId ?? o.table;

/** What search reads of an object: its definition in the workspace and where its rows are. */
interface Searched extends SearchTarget {
  def: ObjectDefinition;
}
/** The longest `q` accepted, in characters (docs/rest.md). */
export const MAX_QUERY_LENGTH = 200;
/** The most words a `q` may hold after normalization. */
export const MAX_WORDS = 8;
export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 100;
/** Words of at least this many characters tolerate one typo (docs/decisions/0030-search.md). */
export const TYPO_MIN_LENGTH = 4;
/** Longer words (an e-mail address, a URL) are matched without typo variants: they would be thousands. */
const TYPO_MAX_LENGTH = 24;
/** Words are runs of letters or runs of digits (the search migration's search_split); only letters take a typo. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

export interface SearchArgs {
  q: unknown;
  /** Plural names; undefined: every object the role can read. */
  objects?: readonly string[];
  /**
   * The objects a transport can show, when not all of the workspace's (GraphQL: the standard
   * ones, whose types its result union holds): without `objects`, only these are searched.
   */
  within?: readonly string[];
  limit?: number;
  after?: string;
  /** How messages name the cursor parameter (`starting_after` on REST, `after` on GraphQL and MCP). */
  afterParam?: string;
}

export interface SearchHit {
  object: string;
  id: string;
  label: string;
  score: number;
  record: AnyRecord;
  cursor: string;
}

export interface SearchResult {
  hits: SearchHit[];
  pageInfo: PageInfo;
}

interface Queries {
  /** Every word exactly. */
  exact: string;
  /** Every word by prefix. */
  prefix: string;
  /** Every word by prefix, or (4+ characters) any one-edit variant of it by prefix. Null when no word is long enough. */
  typo: string | null;
  /** As typo, without prefixes: a whole word one edit away ranks above a longer word (Acne: Acme before Acmetronics). */
  typoWhole: string | null;
}

/** A lexeme as a tsquery operand: quoted, so no character of it is an operator (PostgreSQL docs, 8.11.2). */
const operand = (word: string) => `'${word.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** Every string one edit (Damerau–Levenshtein 1: substitution, insertion, deletion, adjacent swap) away from `word`. */
export function oneEditVariants(word: string): string[] {
  const chars = [...word];
  const out = new Set<string>();
  for (let i = 0; i <= chars.length; i++) {
    const head = chars.slice(0, i).join('');
    const tail = chars.slice(i).join('');
    for (const c of ALPHABET) out.add(head + c + tail);
    if (i < chars.length) {
      const rest = chars.slice(i + 1).join('');
      out.add(head + rest);
      for (const c of ALPHABET) out.add(head + c + rest);
      if (i + 1 < chars.length) out.add(head + chars[i + 1] + chars[i] + chars.slice(i + 2).join(''));
    }
  }
  out.delete(word);
  return [...out];
}

/** At most this many one-edit spellings of a query word enter the typo query (docs/decisions/0030-search.md). */
export const TYPO_MAX_CANDIDATES = 20;

/** Whether a query word tolerates one typo. */
export function typoTolerant(word: string): boolean {
  const n = [...word].length;
  return n >= TYPO_MIN_LENGTH && n <= TYPO_MAX_LENGTH && !/^[0-9]+$/.test(word);
}

/**
 * The one-edit spellings of the query's tolerant words to look up in the lexicon, as the two
 * arrays of `typoCandidatesStatement` ($3 spellings, $4 the index of their word).
 */
export function typoProbe(words: string[]): { spellings: string[]; wordIndexes: number[] } {
  const spellings: string[] = [];
  const wordIndexes: number[] = [];
  words.forEach((w, i) => {
    if (!typoTolerant(w)) return;
    for (const v of oneEditVariants(w)) {
      if ([...v].length < TYPO_MIN_LENGTH - 1) continue;
      spellings.push(v);
      wordIndexes.push(i);
    }
  });
  return { spellings, wordIndexes };
}

/**
 * Which spellings exist in the workspace's lexicon (`search_words`, kept by the search
 * triggers) for the objects searched: as a word's start (so a prefix term finds it) and
 * whether as a whole word. One btree probe per spelling: the cost is bounded by the number of
 * spellings (about 230 for a 4-letter word), not by the rows. $1 workspace, $2 objects (table
 * plural names), $3 spellings, $4 the index of their word.
 */
export const typoCandidatesStatement = `
  SELECT v.i, v.spelling,
         EXISTS (SELECT 1 FROM search_words s
                  WHERE s.workspace_id = $1 AND s.word = v.spelling COLLATE "C" AND s.object = ANY($2::text[])) AS whole
    FROM unnest($3::text[], $4::int[]) AS v(spelling, i)
   WHERE EXISTS (SELECT 1 FROM search_words s
                  WHERE s.workspace_id = $1 AND s.object = ANY($2::text[])
                    AND s.word >= v.spelling COLLATE "C" AND s.word < (v.spelling || chr(1114111)) COLLATE "C")`;

/**
 * The candidates of each query word from the rows of `typoCandidatesStatement`: whole words
 * first, then longer spellings (a shorter one is a wider prefix), at most TYPO_MAX_CANDIDATES.
 */
export function typoCandidates(words: string[], rows: readonly { i: number; spelling: string; whole: boolean }[]): string[][] {
  return words.map((_, i) =>
    rows
      .filter((r) => r.i === i)
      .sort(
        (a, b) =>
          Number(b.whole) - Number(a.whole) ||
          b.spelling.length - a.spelling.length ||
          (a.spelling < b.spelling ? -1 : a.spelling > b.spelling ? 1 : 0),
      )
      .slice(0, TYPO_MAX_CANDIDATES)
      .map((r) => r.spelling),
  );
}

/** A prefix expands to at most this many lexicon words; past that it stays a prefix scan (docs/decisions/0030-search.md). */
export const PREFIX_EXPANSIONS = 50;

/** Whether a prefix can expand through the lexicon, which holds every word of 3+ letters (ASCII here, to be sure Postgres agrees). */
export const expandable = (prefix: string) => /^[a-z]{3,}$/.test(prefix);

/**
 * The lexicon words starting with each prefix ($3), of the workspace ($1) and objects ($2), at
 * most PREFIX_EXPANSIONS + 1 each (one more tells "too many"): a btree range per prefix.
 */
export const expansionsStatement = `
  SELECT v.prefix, array(SELECT DISTINCT s.word FROM search_words s
                          WHERE s.workspace_id = $1 AND s.object = ANY($2::text[])
                            AND s.word >= v.prefix COLLATE "C" AND s.word < (v.prefix || chr(1114111)) COLLATE "C"
                          ORDER BY s.word LIMIT ${PREFIX_EXPANSIONS + 1}) AS words
    FROM unnest($3::text[]) AS v(prefix)`;

/** prefix → its lexicon words, for the prefixes with at most PREFIX_EXPANSIONS (the others stay prefix scans). */
export type Expansions = ReadonlyMap<string, readonly string[]>;
export function expansionsOf(rows: readonly { prefix: string; words: string[] }[]): Expansions {
  return new Map(rows.filter((r) => r.words.length <= PREFIX_EXPANSIONS).map((r) => [r.prefix, r.words]));
}

/**
 * A word matched by prefix: the lexicon words it starts (each an exact GIN entry, no scan of
 * every entry sharing its letters), or `word:*` when it did not expand (not letters, under 3
 * letters, or more than PREFIX_EXPANSIONS words). The lexicon holds every letter word of 3+
 * letters of the workspace's records, so the two match the same records.
 */
function prefixTerm(word: string, expansions: Expansions): string {
  const words = expansions.get(word);
  if (words === undefined) return `${operand(word)}:*`;
  if (!words.length) return operand(word); // no record holds a word starting so: matches nothing
  return words.length === 1 ? operand(words[0]) : `(${words.map(operand).join(' | ')})`;
}

/**
 * The tsqueries of a search. `candidates[i]`: the one-edit spellings of word i found in the
 * lexicon (typoCandidates); without them, no typo query. `expansions`: the prefixes that
 * expand to lexicon words (expansionsOf).
 */
export function searchQueries(words: string[], candidates?: readonly string[][], expansions: Expansions = new Map()): Queries {
  const exact = words.map(operand).join(' & ');
  const prefix = words.map((w) => prefixTerm(w, expansions)).join(' & ');
  const any = Boolean(candidates?.some((c) => c.length));
  if (!candidates || !any) return { exact, prefix, typo: null, typoWhole: null };
  const typo = words
    .map((w, i) =>
      candidates[i].length ? `(${[w, ...candidates[i]].map((v) => prefixTerm(v, expansions)).join(' | ')})` : prefixTerm(w, expansions),
    )
    .join(' & ');
  const typoWhole = words
    .map((w, i) => (candidates[i].length ? `(${[w, ...candidates[i]].map(operand).join(' | ')})` : `${operand(w)}:*`))
    .join(' & ');
  return { exact, prefix, typo, typoWhole };
}

interface Position {
  score: string;
  object: string;
  id: string;
}

/**
 * The most rows of one object a tier brings to the ranking (docs/decisions/0030-search.md):
 * the rows matching every word exactly, those matching the statement's query (prefix or typo)
 * and, in the typo statement, those matching by prefix, each taken from the index up to this
 * many before any is ranked, so a common word costs at most a few hundred heap rows and ranks.
 */
export const SEARCH_CANDIDATES = 300;

/**
 * The statement of one search: for every readable object, its live rows of the workspace
 * matching `$3` (every word exact), `$4` (every word by prefix; typo statement only) and `$2`
 * (the statement's query: prefix, or typo), at most SEARCH_CANDIDATES of each, scored
 * `tier + rank` (tier 3: every word exact, 2: every word by prefix, 1: with a typo; rank:
 * ts_rank with the weights of names, contacts and custom text, normalized into [0, 1)),
 * ordered by score, then object, then id, after the cursor. Exported so the bench's bare
 * server runs the very same SQL.
 */
export function searchStatement(
  principal: ScopePrincipal,
  objects: readonly SearchTarget[],
  withCursor: boolean,
  rows: number,
  typo = false,
  /** Objects matched on some weights only (searchWeights): plural → weights. */
  weights?: ReadonlyMap<string, readonly Weight[]>,
): string {
  // $1 workspace, $2 match, $3 exact, $4 prefix, $5 typo without prefixes; with a cursor $6 score, $7 object, $8 id.
  const candidates = (o: SearchTarget, query: string) => {
    const only = weights?.get(o.plural);
    const s = scope(principal, { schema: { table: o.table }, objectId: o.objectId });
    // The index finds the rows; the filtered vector decides, and ranks, with the readable fields' words only.
    if (only) {
      const vector = `ts_filter(t.search_vector, '{${only.join(',')}}')`;
      return `(SELECT t.id, ${vector} AS search_vector FROM ${s.table} t
       WHERE ${s.where('t.')} AND t.search_vector @@ ${query}::tsquery AND ${vector} @@ ${query}::tsquery
       LIMIT ${SEARCH_CANDIDATES})`;
    }
    return `(SELECT t.id, t.search_vector FROM ${s.table} t
       WHERE ${s.where('t.')} AND t.search_vector @@ ${query}::tsquery LIMIT ${SEARCH_CANDIDATES})`;
  };
  const parts = objects.map(
    (o) => `SELECT DISTINCT '${o.plural}'::text AS object, c.id,
              round((CASE WHEN c.search_vector @@ $3::tsquery THEN 3 + ts_rank(c.search_vector, $4::tsquery, 32)
                          WHEN c.search_vector @@ $4::tsquery THEN 2 + ts_rank(c.search_vector, $4::tsquery, 32)
                          WHEN c.search_vector @@ $5::tsquery THEN 1.5 ELSE 1 END)::numeric, 4) AS score
         FROM (${[candidates(o, '$3'), ...(typo ? [candidates(o, '$4')] : []), candidates(o, '$2')].join(' UNION ALL ')}) c`,
  );
  const keyset = withCursor ? `WHERE s.score < $6::numeric OR (s.score = $6::numeric AND (s.object, s.id) > ($7::text, $8::uuid))` : '';
  return `SELECT s.object, s.id, s.score::text AS score FROM (${parts.join('\n UNION ALL ')}) s ${keyset}
           ORDER BY s.score DESC, s.object, s.id LIMIT ${rows}`;
}

/**
 * The weights of the search vector (the search migrations): names A (a custom object's label
 * identifier), e-mails, domains and links B, custom text C.
 */
export type Weight = 'a' | 'b' | 'c';
const WEIGHTS: readonly Weight[] = ['a', 'b', 'c'];
/** Which built-in field feeds which weight, as each standard object's declaration says. */
const FIELD_WEIGHTS: Record<string, Record<string, Weight>> = Object.fromEntries(
  OBJECTS.map((o) => [o.plural, Object.fromEntries(o.fields.flatMap((f) => (f.search ? [[f.name, f.search]] : [])))]),
);

/**
 * Search across objects (docs/rest.md "Search"; docs/decisions/0030-search.md): one
 * statement over the GIN indexes of the record tables, then the records of the page by id
 * through RecordsService (so they carry the workspace's custom fields, as everywhere else).
 */
@Injectable()
export class SearchService {
  /** q → its normalized words (lower-cased, unaccented, split as the index splits): one small query per new q. */
  private readonly words = new LRUCache<string, string[]>({ max: 5_000 });

  constructor(
    private readonly sql: Sql,
    private readonly records: RecordsService,
    private readonly reads: ReadRouter,
    private readonly dataModel: DataModel,
    private readonly policy: RecordPolicy,
  ) {}

  /**
   * The objects a search reads: those named (each must be one of the workspace's active
   * objects, 400 otherwise, and readable, 403 otherwise), or every readable one of `within`
   * (default: all the workspace serves, standard first, then its own in creation order).
   */
  async objectsFor(principal: Principal, named: readonly string[] | undefined, within?: readonly string[]): Promise<Searched[]> {
    const model = await this.dataModel.of(principal);
    const served = model.served;
    const searched = (plurals: readonly string[]) =>
      plurals.map((plural) => {
        const def = model.definition(plural);
        return { plural, table: def.schema.table, objectId: def.objectId, def };
      });
    if (named === undefined) {
      const readable = served.filter((o) => (!within || within.includes(o)) && this.policy.can(principal, o, 'read'));
      if (!readable.length) throw new ForbiddenError(`The role "${principal.role.name}" does not allow read on any searchable object`);
      return searched(readable);
    }
    if (!named.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'objects must name at least one object when given');
    // Another workspace's objects, and this one's deactivated ones, are unknown here.
    const unknown = named.filter((n) => !served.includes(n));
    if (unknown.length) {
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        `objects: unknown object ${unknown
          .slice(0, 10)
          .map((n) => JSON.stringify(n.slice(0, 100)))
          .join(', ')}${unknown.length > 10 ? ` and ${unknown.length - 10} more` : ''} (searchable: ${served.join(', ')})`,
      );
    }
    for (const n of named) this.policy.assertCan(principal, n, 'read');
    return searched(served.filter((o) => named.includes(o)));
  }

  async search(principal: Principal, args: SearchArgs): Promise<SearchResult> {
    const q = this.checkQ(args.q);
    const limit = args.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
      throw new BadInputError(
        ErrorCode.INVALID_LIMIT,
        `limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}; got ${JSON.stringify(args.limit)}`,
      );
    }
    let objects = await this.objectsFor(principal, args.objects, args.within);
    const weights = hasFieldRestrictions(principal) ? await this.searchWeights(principal, objects, args.objects !== undefined) : undefined;
    if (weights) objects = objects.filter((o) => weights.get(o.plural)?.length !== 0);
    if (!objects.length) throw new ForbiddenError(`The role "${principal.role.name}" cannot read the fields search matches on`);
    const words = await this.wordsOf(q);
    if (!words.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'q holds no word to search (letters or digits)');
    if (words.length > MAX_WORDS) {
      throw new BadInputError(ErrorCode.VALIDATION_FAILED, `q holds ${words.length} words; at most ${MAX_WORDS} are searched`);
    }
    const signature = createHash('sha256')
      .update(JSON.stringify([words, objects.map((o) => o.plural)]))
      .digest('base64url')
      .slice(0, 12);
    const cursor = args.after
      ? this.decode(
          args.after,
          signature,
          args.afterParam ?? 'after',
          objects.map((o) => o.plural),
        )
      : undefined;
    // Exact and prefix matches first; the typo query only when they do not fill the page, with the
    // one-edit spellings of each word that exist in the workspace's lexicon (at most TYPO_MAX_CANDIDATES).
    const expansions = await this.expansions(principal.workspaceId, objects, words);
    let queries = searchQueries(words, undefined, expansions);
    let found = await this.run(principal, objects, queries.prefix, queries, cursor, limit, false, weights);
    if (found.length <= limit && words.some(typoTolerant)) {
      const candidates = await this.typoCandidates(principal.workspaceId, objects, words);
      const more = await this.expansions(principal.workspaceId, objects, candidates.flat());
      queries = searchQueries(words, candidates, new Map([...expansions, ...more]));
      if (queries.typo) found = await this.run(principal, objects, queries.typo, queries, cursor, limit, true, weights);
    }

    const hasMore = found.length > limit;
    const page = found.slice(0, limit);
    const byObject = new Map<string, Map<string, AnyRecord>>();
    for (const o of objects) {
      const ids = page.filter((row) => row.object === o.plural).map((row) => row.id);
      if (ids.length) byObject.set(o.plural, new Map((await this.records.byIds(o.plural, principal, ids)).map((r) => [r.id, r])));
    }
    const hits: SearchHit[] = [];
    for (const row of page) {
      const record = byObject.get(row.object)?.get(row.id);
      if (!record) continue; // deleted between the two statements
      const object = objects.find((o) => o.plural === row.object)!;
      hits.push({
        object: row.object,
        id: row.id,
        label: labelOf(object.def.declaration, record),
        score: Number(row.score),
        record,
        cursor: this.encode(signature, row),
      });
    }
    return {
      hits,
      pageInfo: {
        hasNextPage: hasMore,
        hasPreviousPage: Boolean(cursor),
        startCursor: hits[0]?.cursor ?? null,
        endCursor: hits.at(-1)?.cursor ?? null,
      },
    };
  }

  private checkQ(q: unknown): string {
    if (typeof q !== 'string') throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'q is required, once, as a string');
    // Postgres text cannot hold NUL: refused here rather than failing in the statement (a 500).
    if (q.includes('\u0000')) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'q must not contain NUL characters');
    const trimmed = q.trim();
    if (!trimmed) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'q must not be empty');
    if ([...trimmed].length > MAX_QUERY_LENGTH) {
      throw new BadInputError(ErrorCode.VALIDATION_FAILED, `q is longer than ${MAX_QUERY_LENGTH} characters`);
    }
    return trimmed;
  }

  /** The words of q as the index holds them: the same normalization (unaccent, lower case) and parser, in Postgres. */
  private async wordsOf(q: string): Promise<string[]> {
    let words = this.words.get(q);
    if (!words) {
      const [row] = await this.sql.rows<{ words: string[] }>(WORDS_STATEMENT, [q], { prepared: true });
      words = row.words;
      this.words.set(q, words);
    }
    return words;
  }

  /** The lexicon words each expandable prefix starts (expansionsOf); one statement, none when no prefix expands. */
  async expansions(workspaceId: string, objects: readonly SearchTarget[], prefixes: readonly string[]): Promise<Expansions> {
    const asked = [...new Set(prefixes.filter(expandable))];
    if (!asked.length) return new Map();
    const rows = await this.sql.rows<{ prefix: string; words: string[] }>(
      expansionsStatement,
      [workspaceId, objects.map(lexiconKey), asked],
      { prepared: true },
    );
    return expansionsOf(rows);
  }

  /** The one-edit spellings of each word that exist in the lexicon of the workspace's objects searched (typoCandidates). */
  async typoCandidates(workspaceId: string, objects: readonly SearchTarget[], words: string[]): Promise<string[][]> {
    const { spellings, wordIndexes } = typoProbe(words);
    if (!spellings.length) return words.map(() => []);
    const rows = await this.sql.rows<{ i: number; spelling: string; whole: boolean }>(
      typoCandidatesStatement,
      [workspaceId, objects.map(lexiconKey), spellings, wordIndexes],
      { prepared: true },
    );
    return typoCandidates(words, rows);
  }

  private async run(
    principal: Principal,
    objects: readonly SearchTarget[],
    match: string,
    queries: Queries,
    cursor: Position | undefined,
    limit: number,
    typo: boolean,
    weights?: ReadonlyMap<string, readonly Weight[]>,
  ): Promise<Position[]> {
    const params: unknown[] = [principal.workspaceId, match, queries.exact, queries.prefix, queries.typoWhole ?? queries.exact];
    if (cursor) params.push(cursor.score, cursor.object, cursor.id);
    return this.reads.rows<Position>(principal, searchStatement(principal, objects, Boolean(cursor), limit + 1, typo, weights), params, {
      prepared: 'bounded',
    });
  }

  /**
   * Field permissions in search (docs/decisions/0039-field-permissions.md): a record is never
   * found by the words of a field its role cannot read. Each object is matched on the weights
   * whose fields the role can all read (plural → those weights; absent: all). An object left
   * with no weight is not searched; named in `objects`, it is 403 naming the fields.
   */
  private async searchWeights(
    principal: Principal,
    objects: readonly Searched[],
    named: boolean,
  ): Promise<Map<string, Weight[]> | undefined> {
    const result = new Map<string, Weight[]>();
    for (const o of objects) {
      const hidden = this.policy.hidden(principal, o.plural);
      if (!hidden) continue;
      const custom = o.def.custom ?? [];
      // A custom object's label identifier is its name (weight A; the custom objects' search migration).
      const label = o.def.objectId ? o.def.declaration.label[0] : undefined;
      const lost = new Set<Weight>();
      for (const name of hidden) {
        const weight =
          FIELD_WEIGHTS[o.plural]?.[name] ??
          (name === label ? 'a' : undefined) ??
          (custom.some((f) => f.name === name && fieldType(f.type).search) ? 'c' : undefined);
        if (weight) lost.add(weight);
      }
      if (!lost.size) continue;
      const left = WEIGHTS.filter((w) => !lost.has(w));
      if (!left.length && named) {
        throw new ForbiddenError(
          `The role "${principal.role.name}" does not allow read on ${[...hidden].map((f) => `${o.plural}.${f}`).join(', ')}, which search matches on`,
        );
      }
      result.set(o.plural, left);
    }
    return result.size ? result : undefined;
  }

  private encode(signature: string, row: Position): string {
    return Buffer.from(JSON.stringify({ q: signature, s: row.score, o: row.object, i: row.id })).toString('base64url');
  }

  private decode(raw: string, signature: string, param: string, objects: readonly string[]): Position {
    const fail = (why: string): never => {
      throw new BadInputError(
        ErrorCode.INVALID_CURSOR,
        `${param} must be a cursor from pageInfo of a search with the same q and objects (${why})`,
      );
    };
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    } catch {
      return fail('not a cursor');
    }
    if (!data || typeof data !== 'object') return fail('not a cursor');
    if (data.q !== signature) return fail('it belongs to another search');
    const { s, o, i } = data;
    if (typeof s !== 'string' || !/^\d{1,2}(\.\d{1,4})?$/.test(s)) return fail('bad score');
    if (typeof o !== 'string' || !objects.includes(o)) return fail('bad object');
    if (typeof i !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(i)) return fail('bad id');
    return { score: s, object: o, id: i };
  }
}
