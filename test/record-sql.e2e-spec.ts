import type { INestApplication } from '@nestjs/common';
import { readFileSync, writeFileSync } from 'node:fs';
import type { DataSource } from 'typeorm';
import { Sql, type SqlTx } from '#database/sql.js';
import { loadParser, objectScopeOffences, offences } from '#database/tenant-scope.js';
import { parseFilter } from '#records/query/filter.js';
import { orderWithTieBreaker, DEFAULT_ORDER } from '#records/query/index.js';
import { scope } from '#records/query/scope.js';
import { DataModel } from '#records/service/data-model.js';
import type { ObjectDefinition } from '#records/service/object-definitions.js';
import { RecordRepository, type Db, type PageQuery } from '#records/service/record-repository.js';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { client, expectError, type Http } from './rest-helpers.js';

/*
 * Every statement on records comes from the repository, and each is scoped
 * (docs/decisions/0061-one-path-to-sql.md): this file runs every method of RecordRepository
 * against Postgres, on a standard object and on a custom one, in transactions it rolls back,
 * and (1) checks each statement sent with PostgreSQL's parser: every record table it names
 * carries a workspace equality and, for a custom object's records, an `object_id` equality,
 * at every level; (2) compares the texts with
 * test/snapshots/record-repository.sql, so a reviewer sees every change of the SQL the records
 * API sends in the diff of that file. `SNAPSHOT_WRITE=1` writes the current texts (review the diff).
 */

const SNAPSHOT = 'test/snapshots/record-repository.sql';
const WRITE = process.env.SNAPSHOT_WRITE === '1';
const COMPANY = '00000000-0000-4000-8000-00000000c0de';
const RECORD = '00000000-0000-4000-8000-0000000000aa';

class Rollback extends Error {}

interface Context {
  repo: RecordRepository;
  db: Db;
  people: ObjectDefinition;
  tickets: ObjectDefinition;
  companies: ObjectDefinition;
  /** The custom relation tickets.company → companies (docs/decisions/0066-relations.md). */
  link: string;
  ws: { workspaceId: string };
  /** Runs a statement a builder returned, so it is proved to be valid SQL too. */
  run(sql: string, params: unknown[]): Promise<unknown>;
}

const page = (def: ObjectDefinition, extra: Partial<PageQuery> = {}): PageQuery => ({
  columns: def.columns,
  order: orderWithTieBreaker([...DEFAULT_ORDER]),
  backwards: false,
  limit: 20,
  ...extra,
});

/** Each method of the repository, called as its callers call it: label → call. */
const CALLS: Record<string, Record<string, (c: Context) => Promise<unknown>>> = {
  page: {
    'people, first page': (c) => c.repo.page(c.db, c.people, scope(c.ws, c.people), page(c.people)),
    'people, filtered, after a cursor': (c) =>
      c.repo.page(
        c.db,
        c.people,
        scope(c.ws, c.people),
        page(c.people, {
          filter: parseFilter('name.firstName[eq]:"Ada",company.name[eq]:"Acme"', c.people.schema),
          cursor: { values: ['2026-01-01T00:00:00.000Z'], id: RECORD },
        }),
      ),
    'tickets, first page': (c) => c.repo.page(c.db, c.tickets, scope(c.ws, c.tickets), page(c.tickets)),
    'tickets across their custom relation': (c) =>
      c.repo.page(
        c.db,
        c.tickets,
        scope(c.ws, c.tickets),
        page(c.tickets, { filter: parseFilter('company.name[eq]:"Acme"', c.tickets.schema) }),
      ),
    'companies across the inverse of a custom relation': (c) =>
      c.repo.page(
        c.db,
        c.companies,
        scope(c.ws, c.companies),
        page(c.companies, { filter: parseFilter('tickets.name[eq]:"x"', c.companies.schema) }),
      ),
  },
  count: {
    'people, filtered on deletedAt': (c) =>
      c.repo.count(c.db, c.people, scope(c.ws, c.people), parseFilter('deletedAt[is]:NOT_NULL', c.people.schema)),
    'tickets, filtered': (c) => c.repo.count(c.db, c.tickets, scope(c.ws, c.tickets), parseFilter('name[eq]:"x"', c.tickets.schema)),
  },
  pagesByParent: {
    'people of companies, after a cursor': (c) =>
      c.repo.pagesByParent(
        c.db,
        c.people,
        scope(c.ws, c.people),
        { column: 'company_id' },
        [COMPANY],
        page(c.people, { limit: 3, cursor: { values: ['2026-01-01T00:00:00.000Z'], id: RECORD } }),
      ),
    'tickets of companies, a custom relation, after a cursor': (c) =>
      c.repo.pagesByParent(
        c.db,
        c.tickets,
        scope(c.ws, c.tickets),
        { fieldId: c.link },
        [COMPANY],
        page(c.tickets, { limit: 3, cursor: { values: ['2026-01-01T00:00:00.000Z'], id: RECORD } }),
      ),
  },
  countsByParent: {
    'people of companies': (c) =>
      c.repo.countsByParent(c.db, c.people, scope(c.ws, c.people), { column: 'company_id' }, [COMPANY], undefined),
    'tickets of companies': (c) =>
      c.repo.countsByParent(c.db, c.tickets, scope(c.ws, c.tickets), { fieldId: c.link }, [COMPANY], undefined),
  },
  get: {
    people: (c) => c.repo.get(c.db, c.people, scope(c.ws, c.people), RECORD, c.people.columns),
    tickets: (c) => c.repo.get(c.db, c.tickets, scope(c.ws, c.tickets), RECORD, c.tickets.columns),
  },
  byIds: {
    people: (c) => c.repo.byIds(c.db, c.people, scope(c.ws, c.people), [RECORD]),
    tickets: (c) => c.repo.byIds(c.db, c.tickets, scope(c.ws, c.tickets), [RECORD]),
  },
  children: {
    'people of companies': (c) => c.repo.children(c.db, c.people, scope(c.ws, c.people), { column: 'company_id' }, [COMPANY], 60),
    'tickets of companies': (c) => c.repo.children(c.db, c.tickets, scope(c.ws, c.tickets), { fieldId: c.link }, [COMPANY], 60),
  },
  groupBy: {
    'tickets by name': (c) =>
      c.repo.groupBy(c.db, c.tickets, scope(c.ws, c.tickets), { groupBy: [{ field: 'name' }], aggregates: [{ fn: 'count' }] }),
  },
  liveIds: {
    tickets: (c) => c.repo.liveIds(c.db, scope(c.ws, c.tickets), [RECORD]),
    'companies a batch links to, locked': (c) => c.repo.liveIds(c.db, scope(c.ws, c.companies), [COMPANY], true),
  },
  lockLinking: {
    'tickets linking to a company': (c) => c.repo.lockLinking(c.db, c.tickets, scope(c.ws, c.tickets), c.link, [COMPANY], 'live', 10_000),
  },
  countLinked: {
    'tickets linking to a company': (c) => c.repo.countLinked(c.db, scope(c.ws, c.tickets), c.link, [COMPANY], 'any'),
  },
  unlink: {
    'tickets linking to a company': (c) => c.repo.unlink(c.db, c.tickets, scope(c.ws, c.tickets), c.link, 'companyId', [COMPANY]),
  },
  restoreLinking: {
    'tickets deleted with a company': (c) =>
      c.repo.restoreLinking(c.db, c.tickets, scope(c.ws, c.tickets), c.link, [COMPANY], '2026-01-01T00:00:00.000Z'),
  },
  keyMatches: {
    tickets: (c) => c.repo.keyMatches(c.db, c.tickets, scope(c.ws, c.tickets), [{ i: 0, field: 'name', normalize: 'text', raw: 'x' }]),
  },
  uniqueFields: {
    tickets: (c) => c.repo.uniqueFields(c.db, c.tickets, scope(c.ws, c.tickets)),
  },
  keyHolder: {
    tickets: (c) => c.repo.keyHolder(c.db, scope(c.ws, c.tickets), { object: 'tickets', field: 'name', value: 'x' }),
  },
  countLinking: {
    'people linking a company': (c) => c.repo.countLinking(c.db, scope(c.ws, c.people), 'company_id', COMPANY),
  },
  exists: {
    tickets: (c) => c.repo.exists(c.db, scope(c.ws, c.tickets), RECORD),
  },
  exportQuery: {
    'tickets, filtered': (c) => {
      const q = c.repo.exportQuery(c.tickets, scope(c.ws, c.tickets), parseFilter('name[eq]:"x"', c.tickets.schema), 't.id');
      return c.run(q.sql, q.params);
    },
  },
  lockLive: {
    tickets: (c) => c.repo.lockLive(c.db, c.tickets, scope(c.ws, c.tickets), RECORD),
  },
  lockLiveMany: {
    tickets: (c) => c.repo.lockLiveMany(c.db, c.tickets, scope(c.ws, c.tickets), [RECORD]),
  },
  lockAny: {
    tickets: (c) => c.repo.lockAny(c.db, scope(c.ws, c.tickets), RECORD),
  },
  lockMatching: {
    tickets: (c) => c.repo.lockMatching(c.db, c.tickets, scope(c.ws, c.tickets), parseFilter('name[eq]:"x"', c.tickets.schema)!, 10_000),
  },
  countMatching: {
    tickets: (c) => c.repo.countMatching(c.db, c.tickets, scope(c.ws, c.tickets), parseFilter('name[eq]:"x"', c.tickets.schema)!),
  },
  insert: {
    'people, one linked to a company': (c) => {
      const q = c.repo.insert(c.people, scope(c.ws, c.people), [{ first_name: 'Ada', company_id: null }]);
      return c.run(q.sql, q.params);
    },
    'people, the link checked': (c) => {
      const q = c.repo.insert(c.people, scope(c.ws, c.people), [{ first_name: 'Ada', company_id: COMPANY }]);
      return c.run(q.sql, q.params).catch((err: { code?: string }) => {
        if (err.code !== 'WR001') throw err; // the link's guard: no such company
      });
    },
    tickets: (c) => {
      const q = c.repo.insert(c.tickets, scope(c.ws, c.tickets), [{ custom: JSON.stringify({ name: 'x' }) }]);
      return c.run(q.sql, q.params);
    },
    'tickets, a custom link checked and locked': (c) => {
      const q = c.repo.insert(c.tickets, scope(c.ws, c.tickets), [{ custom: JSON.stringify({ name: 'x', companyId: COMPANY }) }]);
      return c.run(q.sql, q.params).catch((err: { code?: string }) => {
        if (err.code !== 'WR001') throw err; // the link's guard: no such company
      });
    },
  },
  update: {
    tickets: (c) => {
      const q = c.repo.update(c.tickets, scope(c.ws, c.tickets), RECORD, { custom: { name: 'y' } });
      return c.run(q.sql, q.params);
    },
    'tickets, a custom link checked and locked': (c) => {
      const q = c.repo.update(c.tickets, scope(c.ws, c.tickets), RECORD, { custom: { companyId: COMPANY } });
      return c.run(q.sql, q.params).catch((err: { code?: string }) => {
        if (err.code !== 'WR001') throw err;
      });
    },
  },
  updateMany: {
    people: (c) => c.repo.updateMany(c.db, c.people, scope(c.ws, c.people), [RECORD], { first_name: 'Ada' }),
  },
  softDelete: {
    tickets: (c) => {
      const q = c.repo.softDelete(c.tickets, scope(c.ws, c.tickets), RECORD);
      return c.run(q.sql, q.params);
    },
  },
  softDeleteMany: {
    tickets: (c) => c.repo.softDeleteMany(c.db, c.tickets, scope(c.ws, c.tickets), [RECORD]),
  },
  restore: {
    tickets: (c) => c.repo.restore(c.db, c.tickets, scope(c.ws, c.tickets), RECORD),
  },
  erase: {
    tickets: (c) => c.repo.erase(c.db, scope(c.ws, c.tickets), RECORD),
  },
  insertRecordset: {
    'people, ids returned': (c) =>
      c.run(c.repo.insertRecordset(c.people, scope(c.ws, c.people), ['first_name'], 'ids'), [c.ws.workspaceId, '[]']),
    'tickets, records returned': (c) =>
      c.run(c.repo.insertRecordset(c.tickets, scope(c.ws, c.tickets), ['custom'], 'records'), [c.ws.workspaceId, '[]']),
  },
  updateRecordset: {
    tickets: (c) => c.run(c.repo.updateRecordset(c.tickets, scope(c.ws, c.tickets), ['custom']), [c.ws.workspaceId, '[]']),
  },
};

describe('the record repository', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let ws: TestWorkspace;
  let objectId: string;
  let linkId: string;
  const sent = new Map<string, string[]>();

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
    ws = await newWorkspace(ds, 'record-sql');
    const made = await client(http, ws.keys.Admin).post('/rest/metadata/objects', {
      nameSingular: 'ticket',
      namePlural: 'tickets',
      labelSingular: 'Ticket',
      labelPlural: 'Tickets',
    });
    expect(made.status).toBe(201);
    objectId = made.body.data.createObject.id;
    const relation = await client(http, ws.keys.Admin).post('/rest/metadata/fields', {
      object: 'tickets',
      name: 'company',
      type: 'RELATION',
      relation: { type: 'MANY_TO_ONE', targetObject: 'companies', inverseName: 'tickets' },
    });
    expect(relation.status).toBe(201);
    linkId = relation.body.data.createField.id;
    await loadParser();
    const model = await app.get(DataModel).read(ws.id);
    const repo = app.get(RecordRepository);
    for (const [method, calls] of Object.entries(CALLS)) {
      for (const [label, call] of Object.entries(calls)) {
        const texts: string[] = [];
        // Each call in a transaction of its own, rolled back: nothing is written, and a refusal ends only that call.
        await app
          .get(Sql)
          .transaction(async (tx: SqlTx) => {
            const db: Db = {
              rows: (sql, params, options) => {
                texts.push(sql);
                return tx.rows(sql, params, options);
              },
            };
            await call({
              repo,
              db,
              people: model.definition('people'),
              tickets: model.definition('tickets'),
              companies: model.definition('companies'),
              link: linkId,
              ws: { workspaceId: ws.id },
              run: (sql, params) => db.rows(sql, params),
            });
            throw new Rollback();
          })
          .catch((err) => {
            if (!(err instanceof Rollback)) throw err;
          });
        sent.set(`${method}: ${label}`, texts);
      }
    }
  });
  afterAll(() => app.close());

  it('has a call here for every method of the repository', () => {
    const methods = Object.getOwnPropertyNames(RecordRepository.prototype).filter((name) => name !== 'constructor');
    expect(methods.filter((name) => !(name in CALLS))).toEqual([]);
    // A call that sent nothing would leave its method unchecked below.
    expect([...sent].filter(([, texts]) => !texts.length).map(([call]) => call)).toEqual([]);
  });

  it("scopes every record table it names to the workspace and a custom object's records to the object", async () => {
    const tables = new Set<string>(
      (
        await ds.query(`SELECT table_name AS name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'custom'`)
      ).map((r: { name: string }) => r.name),
    );
    expect([...tables].sort()).toEqual(['companies', 'custom_records', 'opportunities', 'people']);
    const offenders = [...sent].flatMap(([call, texts]) =>
      texts.flatMap((sql) => {
        const found = [...offences(sql, tables), ...objectScopeOffences(sql, new Set(['custom_records']))];
        return found.length ? [{ call, sql, found }] : [];
      }),
    );
    expect(offenders).toEqual([]);
  });

  it('sends the statements of test/snapshots/record-repository.sql', () => {
    const text = [...sent]
      .map(([call, texts]) => `-- ${call}\n${texts.map((sql) => `${normalized(sql, objectId, linkId)};`).join('\n')}\n`)
      .join('\n');
    if (WRITE) writeFileSync(SNAPSHOT, text);
    expect(text).toBe(readFileSync(SNAPSHOT, 'utf8'));
  });
});

/** A statement as the snapshot keeps it: one line, the custom object's id as `<object id>`, the custom relation's as `<field id>`. */
function normalized(sql: string, objectId: string, linkId: string): string {
  return sql.replace(/\s+/g, ' ').trim().replaceAll(objectId, '<object id>').replaceAll(linkId, '<field id>');
}

/*
 * The writer on a custom object's records, attacked with another object's record of the same
 * workspace: every path that changes records (libs/records/src/service/record-writer.ts) treats it as missing,
 * and it is never touched.
 */
describe("the writer, given another object's record", () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  it('treats it as missing on every write path, and writes nothing', async () => {
    const ws = await newWorkspace(ds, 'writer-objects');
    const api = client(http, ws.keys.Admin);
    for (const [singular, plural] of [
      ['ticket', 'tickets'],
      ['project', 'projects'],
    ]) {
      const made = await api.post('/rest/metadata/objects', {
        nameSingular: singular,
        namePlural: plural,
        labelSingular: singular,
        labelPlural: plural,
      });
      expect(made.status).toBe(201);
    }
    const project = (await api.post('/rest/projects', { name: 'Apollo' })).body.data.createProject;
    const before = (await api.get(`/rest/projects/${project.id}`)).body.data.project;
    const id = project.id as string;

    expectError(await api.get(`/rest/tickets/${id}`), 404, 'NOT_FOUND');
    expectError(await api.patch(`/rest/tickets/${id}`, { name: 'hijacked' }), 404, 'NOT_FOUND');
    expectError(await api.delete(`/rest/tickets/${id}`), 404, 'NOT_FOUND');
    expectError(await api.patch(`/rest/restore/tickets/${id}`, {}), 404, 'NOT_FOUND');
    expectError(await api.delete(`/rest/tickets/${id}?hard=true`), 404, 'NOT_FOUND');
    const byFilter = await api.patch(`/rest/tickets?filter=id[eq]:${id}`, { name: 'hijacked' });
    expect([byFilter.status, byFilter.body.data]).toEqual([200, { updateTickets: { count: 0, ids: [] } }]);
    const deleted = await api.delete(`/rest/tickets?filter=id[eq]:${id}`);
    expect([deleted.status, deleted.body.data]).toEqual([200, { deleteTickets: { count: 0, ids: [] } }]);
    // An id is the workspace's: a ticket cannot take the project's, by create or by upsert.
    expectError(await api.post('/rest/tickets', { id, name: 'hijacked' }), 409, 'CONFLICT');
    expectError(await api.post('/rest/tickets?upsert=true', { id, name: 'hijacked' }), 409, 'CONFLICT');
    expectError(await api.post('/rest/batch/tickets', [{ id, name: 'hijacked' }]), 409, 'CONFLICT');

    expect((await api.get(`/rest/projects/${id}`)).body.data.project).toEqual(before);
    expect((await api.get('/rest/tickets')).body.totalCount).toBe(0);
  });
});
