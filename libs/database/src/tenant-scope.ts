import { loadModule, parseSync } from 'libpg-query';

/**
 * Whether a statement can be routed to one workspace's shard when the tenant tables are
 * distributed by `workspace_id` (docs/scaling.md "Distributed Postgres (Citus)";
 * docs/decisions/0038-pooler-and-citus.md): every tenant table it reads or writes carries
 * a `workspace_id` equality. Parsed with PostgreSQL's own parser (libpg-query), not patterns.
 *
 * Per query level (a SELECT, UPDATE, DELETE, each subquery and CTE on its own), a tenant
 * table is anchored when an equality in the top-level AND of its WHERE or JOIN … ON sets its
 * `workspace_id` to a parameter or constant, to an outer query's column (a correlated
 * subquery, checked at its own level), or to an anchored table's `workspace_id` (a
 * co-located join). An INSERT or COPY FROM names `workspace_id` among its columns.
 * Comparisons under OR or NOT anchor nothing.
 */

/**
 * Tables with a `workspace_id` column that stay reference tables (copied to every node):
 * each is looked up by a credential, a session or a grant before any workspace is known.
 */
export const REFERENCE_TABLES_WITH_WORKSPACE: Readonly<Record<string, string>> = {
  api_keys: 'a bearer key is looked up by its hash, before its workspace is known',
  roles: 'joined to api_keys and workspace_members on every credential lookup',
  workspace_members: 'a signed-in person lists their workspaces by user id',
  workspace_invites: 'an invite is opened by its token hash',
  server_apps: 'an OAuth client is looked up by client id',
  oauth_grant_workspaces: 'an access token names a grant, the grant its workspace',
  oauth_interaction_workspaces: 'an authorization interaction names its workspace by uid',
  web_sessions: "a browser session (its workspace_id is the person's current choice, nullable)",
};

export interface ScopeOffence {
  table: string;
  reason: string;
}

type Node = Record<string, unknown>;

let loaded: Promise<void> | undefined;

/** libpg-query's WebAssembly module, loaded once before `offences` is called. */
export function loadParser(): Promise<void> {
  return (loaded ??= loadModule());
}

/**
 * The tenant tables `sql` touches without a `workspace_id` equality (empty: it is fine).
 * `tenantTables`: distributed tables (public schema, unqualified or `public.` names).
 * A statement the parser refuses is reported as such.
 */
export function offences(sql: string, tenantTables: ReadonlySet<string>): ScopeOffence[] {
  const tree = parsed(sql);
  if (Array.isArray(tree)) return tree;
  const found: ScopeOffence[] = [];
  const ctes = new Set<string>();
  collectCteNames(tree, ctes);
  const isTenant = (r: Relation) => (r.schema === undefined || r.schema === 'public') && tenantTables.has(r.name) && !ctes.has(r.name);
  eachLevel(tree, checkLevel, (target, cols, kind) => checkColumns(target, cols, `${kind} without workspace_id`));
  return found;

  function checkColumns(target: Relation, cols: unknown, reason: string) {
    if (!isTenant(target)) return;
    const names = ((cols as Node[] | undefined) ?? []).map(
      (c) => (c.ResTarget as Node | undefined)?.name ?? (c.String as Node | undefined)?.sval,
    );
    if (!names.includes('workspace_id')) found.push({ table: target.name, reason });
  }

  function checkLevel(relations: Relation[], quals: unknown[]) {
    const tenants = relations.filter(isTenant);
    if (!tenants.length) return;
    const aliases = new Set(relations.map((r) => r.alias));
    const equalities = quals.flatMap((q) => conjuncts(q as Node | undefined)).flatMap(equality);
    const anchored = new Set<string>();
    // A side that names no column of this level: a parameter, a constant, an outer column.
    const fixed = (side: Node): boolean => {
      const column = columnOf(side);
      if (!column) return isValue(side);
      return column.qualifier !== undefined && !aliases.has(column.qualifier) && column.name === 'workspace_id';
    };
    const workspaceOf = (side: Node): string[] => {
      const column = columnOf(side);
      if (!column || column.name !== 'workspace_id') return [];
      if (column.qualifier === undefined) return tenants.map((t) => t.alias);
      return aliases.has(column.qualifier) ? [column.qualifier] : [];
    };
    for (let changed = true; changed;) {
      changed = false;
      for (const [l, r] of equalities) {
        for (const [side, other] of [
          [l, r],
          [r, l],
        ]) {
          const other_ = workspaceOf(other);
          if (!(fixed(other) || other_.some((a) => anchored.has(a)))) continue;
          for (const alias of workspaceOf(side)) {
            if (!anchored.has(alias)) {
              anchored.add(alias);
              changed = true;
            }
          }
        }
      }
    }
    for (const t of tenants) if (!anchored.has(t.alias)) found.push({ table: t.name, reason: 'no workspace_id equality' });
  }
}

/**
 * Where a statement reads or writes a table of several objects' records (`objectTables`: a
 * record table with an `object_id` column, `custom_records`) without the object the record
 * scope adds (libs/records/src/query/scope.ts; docs/decisions/0061-one-path-to-sql.md): a
 * query level without an `object_id` equality to a parameter or constant, or an INSERT
 * without the column. Such a statement would touch every object's records of the workspace.
 */
export function objectScopeOffences(sql: string, objectTables: ReadonlySet<string>): ScopeOffence[] {
  const tree = parsed(sql);
  if (Array.isArray(tree)) return tree;
  const found: ScopeOffence[] = [];
  const ctes = new Set<string>();
  collectCteNames(tree, ctes);
  const isObjects = (r: Relation) => (r.schema === undefined || r.schema === 'public') && objectTables.has(r.name) && !ctes.has(r.name);
  eachLevel(tree, objectLevel, (target, cols, kind) => {
    const names = ((cols as Node[] | undefined) ?? []).map((c) => (c.ResTarget as Node | undefined)?.name);
    if (kind === 'INSERT' && isObjects(target) && !names.includes('object_id'))
      found.push({ table: target.name, reason: 'INSERT without object_id' });
  });
  return found;

  function objectLevel(relations: Relation[], quals: unknown[]) {
    const scoped = relations.filter(isObjects);
    if (!scoped.length) return;
    const fixed = new Set<string | undefined>();
    for (const [l, r] of quals.flatMap((q) => conjuncts(q as Node | undefined)).flatMap(equality)) {
      for (const [side, other] of [
        [l, r],
        [r, l],
      ]) {
        const column = columnOf(side);
        if (column?.name === 'object_id' && isValue(other)) fixed.add(column.qualifier);
      }
    }
    for (const t of scoped) {
      if (!fixed.has(t.alias) && !(relations.length === 1 && fixed.has(undefined)))
        found.push({ table: t.name, reason: 'no object_id equality' });
    }
  }
}

/** The parse tree of `sql`, or the offence of a statement the parser refuses. */
function parsed(sql: string): Node | ScopeOffence[] {
  try {
    return parseSync(sql) as unknown as Node;
  } catch (err) {
    return [{ table: '?', reason: `not parsed: ${(err as Error).message}` }];
  }
}

/**
 * Each query level of a statement (a SELECT, UPDATE, DELETE or MERGE, each subquery and CTE
 * on its own) with its tables and the conditions that can anchor them, and each INSERT's or
 * COPY's target with the columns it names.
 */
function eachLevel(
  tree: Node,
  level: (relations: Relation[], quals: unknown[]) => void,
  columns: (target: Relation, cols: unknown, kind: 'INSERT' | 'COPY') => void,
): void {
  walk(tree, (node) => {
    for (const [kind, body] of Object.entries(node)) {
      const stmt = body as Node;
      if (kind === 'SelectStmt') level(relationsOf(stmt.fromClause), [stmt.whereClause, ...joinQuals(stmt.fromClause)]);
      else if (kind === 'UpdateStmt')
        level([rangeVar(stmt.relation as Node), ...relationsOf(stmt.fromClause)], [stmt.whereClause, ...joinQuals(stmt.fromClause)]);
      else if (kind === 'DeleteStmt')
        level([rangeVar(stmt.relation as Node), ...relationsOf(stmt.usingClause)], [stmt.whereClause, ...joinQuals(stmt.usingClause)]);
      else if (kind === 'InsertStmt') columns(rangeVar(stmt.relation as Node), stmt.cols, 'INSERT');
      else if (kind === 'CopyStmt' && stmt.relation) columns(rangeVar(stmt.relation as Node), stmt.attlist, 'COPY');
      else if (kind === 'MergeStmt') level([rangeVar(stmt.relation as Node)], [stmt.joinCondition]);
    }
  });
}

interface Relation {
  schema?: string;
  name: string;
  alias: string;
}

function rangeVar(node: Node): Relation {
  const alias = (node.alias as Node | undefined)?.aliasname as string | undefined;
  return { schema: node.schemaname as string | undefined, name: node.relname as string, alias: alias ?? (node.relname as string) };
}

/** The tables of a FROM list at this level (joins included; subqueries are levels of their own). */
function relationsOf(from: unknown): Relation[] {
  const out: Relation[] = [];
  const visit = (item: Node | undefined) => {
    if (!item) return;
    if (item.RangeVar) out.push(rangeVar(item.RangeVar as Node));
    const join = item.JoinExpr as Node | undefined;
    if (join) {
      visit(join.larg as Node);
      visit(join.rarg as Node);
    }
  };
  for (const item of (from as Node[] | undefined) ?? []) visit(item);
  return out;
}

function joinQuals(from: unknown): unknown[] {
  const out: unknown[] = [];
  const visit = (item: Node | undefined) => {
    const join = item?.JoinExpr as Node | undefined;
    if (!join) return;
    out.push(join.quals);
    visit(join.larg as Node);
    visit(join.rarg as Node);
  };
  for (const item of (from as Node[] | undefined) ?? []) visit(item);
  return out;
}

/** The terms of a top-level AND (an OR or NOT is one opaque term). */
function conjuncts(node: Node | undefined): Node[] {
  if (!node) return [];
  const bool = node.BoolExpr as Node | undefined;
  if (bool?.boolop === 'AND_EXPR') return (bool.args as Node[]).flatMap(conjuncts);
  return [node];
}

function equality(node: Node): [Node, Node][] {
  const expr = node.A_Expr as Node | undefined;
  if (!expr || expr.kind !== 'AEXPR_OP') return [];
  const op = (expr.name as Node[]).map((n) => (n.String as Node).sval).join('.');
  if (op !== '=' && op !== 'pg_catalog.=') return [];
  return [[expr.lexpr as Node, expr.rexpr as Node]];
}

function unwrap(node: Node): Node {
  const cast = node.TypeCast as Node | undefined;
  return cast ? unwrap(cast.arg as Node) : node;
}

function columnOf(node: Node): { qualifier?: string; name: string } | undefined {
  const ref = unwrap(node).ColumnRef as Node | undefined;
  if (!ref) return undefined;
  const fields = (ref.fields as Node[]).map((f) => (f.String as Node | undefined)?.sval as string | undefined);
  const name = fields[fields.length - 1];
  if (name === undefined) return undefined;
  return { qualifier: fields.length > 1 ? fields[fields.length - 2] : undefined, name };
}

function isValue(node: Node): boolean {
  const inner = unwrap(node);
  return Boolean(inner.ParamRef || inner.A_Const);
}

function collectCteNames(tree: unknown, out: Set<string>) {
  walk(tree, (node) => {
    const cte = node.CommonTableExpr as Node | undefined;
    if (cte) out.add(cte.ctename as string);
  });
}

/** Every object node of the parse tree, depth first. */
function walk(tree: unknown, visit: (node: Node) => void) {
  if (Array.isArray(tree)) {
    for (const item of tree) walk(item, visit);
  } else if (tree && typeof tree === 'object') {
    visit(tree as Node);
    for (const value of Object.values(tree)) walk(value, visit);
  }
}

/** Whether the text holds a schema change (CREATE, ALTER, DROP …) among its statements: a migration's. */
export function changesSchema(sql: string): boolean {
  try {
    const tree = parseSync(sql) as unknown as { stmts?: { stmt: Node }[] };
    return (tree.stmts ?? []).some(({ stmt }) => Object.keys(stmt).some((kind) => /^(Create|Alter|Drop|Index|Rename|Comment)/.test(kind)));
  } catch {
    return false;
  }
}

/**
 * Statements that touch tenant tables across workspaces on purpose: maintenance sweeps that
 * run on a timer, not for a request. Under Citus they run as multi-shard statements (one per
 * shard, in parallel). Keyed by the table and the start of the text (whitespace collapsed).
 */
export const MULTI_SHARD_BY_DESIGN: readonly { table: string; sql: string; reason: string }[] = [
  {
    table: 'imports',
    sql: `DELETE FROM imports WHERE status = 'uploading' AND updated_at < now() - interval '1 hour'`,
    reason: "the import worker's heartbeat sweeps uploads abandoned by a dead instance, in every workspace",
  },
  {
    table: 'imports',
    sql: `SELECT workspace_id, id FROM imports WHERE status IN ('queued', 'running')`,
    reason:
      "the import worker's heartbeat looks in every workspace for unfinished imports left without a job that can run (stranded-imports.ts)",
  },
  {
    table: 'custom_fields',
    sql: "SELECT name, kind FROM (SELECT name, CASE WHEN type = ANY($3::text[]) THEN 'number' ELSE 'text' END AS kind,",
    reason:
      "a custom-field index is shared by every workspace with such a field, and a table's slots are shared among all of them: the sweeper ranks every workspace's fields (field-indexes.ts)",
  },
  {
    table: 'webhooks',
    sql: 'DELETE FROM webhooks WHERE id = $1 RETURNING id, workspace_id, url',
    reason: "the operator's webhook:delete names only the webhook's id (a uuid, so it matches in one workspace at most)",
  },
  {
    table: 'webhooks',
    sql: 'SELECT workspace_id, id, secret_sealed FROM webhooks ORDER BY workspace_id, id FOR UPDATE',
    reason: "the operator's vault:rotate-master-key re-wraps every workspace's webhook signing secrets in one transaction",
  },
  {
    table: 'webhook_deliveries',
    sql: "SELECT workspace_id, id, attempts FROM webhook_deliveries WHERE status = 'pending'",
    reason:
      "the webhook worker's heartbeat looks in every workspace for pending deliveries left without a job (delivery.ts, requeueStranded)",
  },
  {
    table: 'deleted_objects',
    sql: 'SELECT workspace_id, object_id FROM deleted_objects ORDER BY deleted_at LIMIT 1',
    reason:
      "the records API's sweep takes the oldest deleted object of any workspace, then removes its records in that workspace (objects.ts)",
  },
  {
    table: 'vault_keys',
    sql: 'SELECT workspace_id, data_key_sealed FROM vault_keys ORDER BY workspace_id FOR UPDATE',
    reason: "the operator's vault:rotate-master-key re-wraps every workspace's vault data key in one transaction",
  },
];

export interface RecordingReport {
  /** Distinct application statements checked (the tests' own SQL is not). */
  checked: number;
  offenders: { sql: string; from: string; offences: ScopeOffence[] }[];
}

/**
 * Checks a SQL_RECORD_FILE (sql-record.ts): every statement sent from application code
 * (not from test files or migrations) against the tenant tables, less the multi-shard ones by design.
 */
export async function checkRecording(
  lines: string[],
  tenantTables: ReadonlySet<string>,
  /** Tables of several objects' records (objectScopeOffences): each must also name its object. */
  objectTables?: ReadonlySet<string>,
): Promise<RecordingReport> {
  await loadParser();
  const seen = new Set<string>();
  const report: RecordingReport = { checked: 0, offenders: [] };
  for (const line of lines) {
    if (!line.trim()) continue;
    const { sql, from } = JSON.parse(line) as { sql: string; from: string };
    // The tests' own SQL, and migrations (schema changes and backfills of every workspace, run once):
    // by their file, or, when the caller was not found, by a schema change in the text.
    if (seen.has(sql) || from.startsWith('test/') || /(^|\/)migrations\//.test(from) || changesSchema(sql)) continue;
    seen.add(sql);
    report.checked++;
    const text = sql.replace(/\s+/g, ' ').trim();
    const left = offences(sql, tenantTables).filter(
      (o) => !MULTI_SHARD_BY_DESIGN.some((m) => m.table === o.table && text.startsWith(m.sql)),
    );
    if (objectTables) left.push(...objectScopeOffences(sql, objectTables));
    if (left.length) report.offenders.push({ sql, from, offences: left });
  }
  return report;
}
