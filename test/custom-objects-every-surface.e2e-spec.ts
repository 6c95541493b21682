import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApiKey, findRole } from '#identity/accounts.js';
import { FIELD_TYPES } from '#records/field-types/index.js';
import type { FormBrowser } from '../bench/form-browser.js';
import { settingsJson, signInAt } from './settings-client.js';
import { startPublicOrigin, workspaceWith, type PublicOrigin, restAt } from './public-origin.js';
import { Receiver, TEST_WORKER_ENV } from './webhook-receiver.js';

/**
 * A workspace's own object with a field of every type, used on every surface
 * (docs/data-model.md "Custom objects"): REST, GraphQL (typed, in introspection), OpenAPI,
 * MCP, imports, exports, search, groupBy, webhooks and /settings/data-model — for that
 * workspace only. A new field type must give a value here (the table is checked against
 * the registry), so it is tried on every surface too.
 */
const DAY = 86_400_000;

/** A value of each type as a REST create sends it, and as the record shows it when it differs. */
const VALUES: Record<string, { sent: unknown; shown?: unknown; options?: { value: string }[] }> = {
  TEXT: { sent: 'Plain text' },
  NUMBER: { sent: 12.5 },
  BOOLEAN: { sent: true },
  DATE: { sent: '2026-12-31' },
  DATE_TIME: { sent: '2026-12-31T12:00:00.000Z' },
  SELECT: { sent: 'GOLD', options: [{ value: 'GOLD' }, { value: 'SILVER' }] },
  MULTI_SELECT: { sent: ['RED', 'BLUE'], options: [{ value: 'RED' }, { value: 'BLUE' }] },
  RATING: { sent: 'RATING_4' },
  CURRENCY: { sent: { amountMicros: 1_500_000, currencyCode: 'EUR' } },
  LINKS: {
    sent: { primaryLinkUrl: 'https://apollo.example.com', primaryLinkLabel: 'Site', secondaryLinks: [] },
  },
  EMAILS: { sent: { primaryEmail: 'team@apollo.example.com', additionalEmails: [] } },
  PHONES: { sent: { primaryPhoneNumber: '612345678', primaryPhoneCountryCode: 'FR', primaryPhoneCallingCode: '+33' } },
  FULL_NAME: { sent: { firstName: 'Ada', lastName: 'Lovelace' } },
  ADDRESS: {
    sent: { addressStreet1: '1 Main St', addressCity: 'Lyon', addressCountry: 'France', addressLat: 45.76, addressLng: 4.83 },
    shown: {
      addressStreet1: '1 Main St',
      addressStreet2: null,
      addressCity: 'Lyon',
      addressPostcode: null,
      addressState: null,
      addressCountry: 'France',
      addressLat: 45.76,
      addressLng: 4.83,
    },
  },
  RICH_TEXT: { sent: '# Notes\n\nFirst **launch**.' },
  UUID: { sent: '0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10' },
};
/** The field of type `type`: `fText`, `fMultiSelect`, … */
const fieldName = (type: string) => `f${type.toLowerCase().replace(/(^|_)([a-z])/g, (_, _s, c: string) => c.toUpperCase())}`;

describe('a custom object with a field of every type, on every surface', () => {
  let origin: PublicOrigin;
  let url: string;

  beforeAll(async () => {
    origin = await startPublicOrigin({ ...TEST_WORKER_ENV, IMPORTS_WORKER: 'on', IMPORTS_HEARTBEAT_MS: '500' });
    url = origin.url;
  }, 60_000);
  afterAll(async () => {
    await origin?.close();
  });

  const rest = (key: string, method: string, path: string, body?: unknown) => restAt(url, key, method, path, body);
  const json = (b: FormBrowser, method: string, path: string, body?: unknown) =>
    settingsJson(url, b, method, path, body, { 'x-csrf-token': b.cookie('wrs_csrf')! });
  async function workspace(label: string) {
    const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], label);
    const role = await findRole(origin.ds, workspace.id, 'Admin');
    const key = (await createApiKey(origin.ds, { workspaceId: workspace.id, role, name: 'admin', expiresAt: new Date(Date.now() + DAY) }))
      .secret;
    return { workspace, key, email: people[0].email };
  }

  it('gives a value for every type of the registry', () => {
    expect(Object.keys(VALUES).sort()).toEqual(FIELD_TYPES.map((t) => t.name).sort());
  });

  it('serves the object and all its fields on REST, GraphQL, OpenAPI, MCP, imports, exports, search, groupBy, webhooks and the settings page, for its workspace only', async () => {
    const { workspace: ws, key, email } = await workspace('every-surface');
    const other = await workspace('every-surface-other');
    expect(
      (
        await rest(key, 'POST', '/rest/metadata/objects', {
          nameSingular: 'project',
          namePlural: 'projects',
          labelSingular: 'Project',
          labelPlural: 'Projects',
        })
      ).status,
    ).toBe(201);
    for (const type of FIELD_TYPES) {
      const made = await rest(key, 'POST', '/rest/metadata/fields', {
        object: 'projects',
        name: fieldName(type.name),
        type: type.name,
        ...(VALUES[type.name].options ? { options: VALUES[type.name].options } : {}),
      });
      expect([type.name, made.status]).toEqual([type.name, 201]);
    }
    const body = Object.fromEntries([['name', 'Apollo'], ...FIELD_TYPES.map((t) => [fieldName(t.name), VALUES[t.name].sent])]);
    const shown = Object.fromEntries(FIELD_TYPES.map((t) => [fieldName(t.name), VALUES[t.name].shown ?? VALUES[t.name].sent]));

    // Webhooks: a member's webhook on the object's events receives the record with every field.
    const receiver = await new Receiver().start();
    try {
      const b = await signInAt(url, email);
      const hook = await json(b, 'POST', '/settings/api/webhooks', { url: receiver.url, operations: ['project.created'] });
      expect(hook.status).toBe(201);

      // REST.
      const created = await rest(key, 'POST', '/rest/projects', body);
      expect(created.status).toBe(201);
      const record = created.body.data.createProject;
      expect(record).toMatchObject({ name: 'Apollo', ...shown });
      expect((await rest(key, 'GET', `/rest/projects/${record.id}`)).body.data.project).toEqual(record);
      const filtered = await rest(key, 'GET', `/rest/projects?filter=fSelect[eq]:"GOLD",fNumber[gte]:12`);
      expect(filtered.body.data.projects.map((p: { id: string }) => p.id)).toEqual([record.id]);

      await receiver.waitFor(1);
      const [event] = receiver.verified(hook.body.data.createWebhook.secret);
      expect(event.type).toBe('project.created');
      expect(event.data.record).toEqual(record);

      // GraphQL: typed, in introspection, and queried.
      const gql = (secret: string, query: string) =>
        fetch(`${url}/graphql`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        }).then((r) => r.json() as Promise<any>); // eslint-disable-line @typescript-eslint/no-explicit-any
      const type = await gql(key, '{ __type(name: "Project") { fields { name } } }');
      expect(type.data.__type.fields.map((f: { name: string }) => f.name)).toEqual(
        expect.arrayContaining(['id', 'name', ...FIELD_TYPES.map((t) => fieldName(t.name))]),
      );
      const listed = await gql(key, '{ projects { totalCount edges { node { id name fText fRating fCurrency { amountMicros } } } } }');
      expect(listed.data.projects).toEqual({
        totalCount: 1,
        edges: [
          { node: { id: record.id, name: 'Apollo', fText: 'Plain text', fRating: 'RATING_4', fCurrency: { amountMicros: 1500000 } } },
        ],
      });

      // OpenAPI: the workspace's document has the object's routes and a property per field.
      const doc = (await rest(key, 'GET', '/rest/open-api')).body;
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/rest/projects', '/rest/projects/{id}']));
      expect(Object.keys(doc.components.schemas.ProjectModel.properties)).toEqual(
        expect.arrayContaining(['id', 'name', ...FIELD_TYPES.map((t) => fieldName(t.name))]),
      );

      // MCP: every field described, and the record read is REST's.
      const mcp = async (secret: string) => {
        const c = new Client({ name: 'every-surface-e2e', version: '1.0.0' });
        await c.connect(
          new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }),
        );
        return c;
      };
      const agent = await mcp(key);
      try {
        // The generic tools take the object by name; describe_object gives every field with its type.
        const described = (await agent.callTool({ name: 'describe_object', arguments: { object: 'projects' } })) as CallToolResult;
        const fields = (described.structuredContent as { objects: { fields: { name: string; type: string }[] }[] }).objects[0].fields;
        for (const t of FIELD_TYPES) expect(fields).toContainEqual(expect.objectContaining({ name: fieldName(t.name), type: t.name }));
        const got = (await agent.callTool({ name: 'get_record', arguments: { object: 'projects', id: record.id } })) as CallToolResult;
        expect(got.isError).toBeFalsy();
        expect((got.structuredContent as { record: unknown }).record).toEqual(record);
      } finally {
        await agent.close();
      }

      // Imports (NDJSON and CSV), then exports with every field.
      const upload = async (text: string, type: string) => {
        const res = await fetch(`${url}/rest/imports?object=projects`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': type },
          body: text,
        });
        expect(res.status).toBe(202);
        const id = ((await res.json()) as { data: { import: { id: string } } }).data.import.id;
        for (let i = 0; i < 200; i++) {
          const state = (await rest(key, 'GET', `/rest/imports/${id}`)).body.data.import;
          if (state.status === 'completed' || state.status === 'failed') return state;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error('the import did not end');
      };
      expect(
        await upload(
          `${JSON.stringify({ ...body, name: 'Imported', fUuid: '1b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10' })}\n`,
          'application/x-ndjson',
        ),
      ).toMatchObject({
        status: 'completed',
        created: 1,
        failed: 0,
      });
      const csv = await fetch(`${url}/rest/projects/export?format=csv`, { headers: { authorization: `Bearer ${key}` } });
      expect(csv.status).toBe(200);
      const text = await csv.text();
      const header = text.split('\n')[0].split(',');
      for (const t of FIELD_TYPES) expect(header.some((h) => h === fieldName(t.name) || h.startsWith(`${fieldName(t.name)}.`))).toBe(true);
      // Two records, a RICH_TEXT cell over two lines (quoted, RFC 4180).
      expect(text).toContain(`${record.id},`);
      expect(text).toMatch(/,Imported,/);
      expect(text).toContain('"# Notes\n\nFirst **launch**."');
      const ndjson = await fetch(`${url}/rest/projects/export?format=ndjson`, { headers: { authorization: `Bearer ${key}` } });
      const lines = (await ndjson.text())
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(lines.find((l) => l.id === record.id)).toEqual(record);

      // Search and groupBy.
      const found = await rest(key, 'GET', '/rest/search?q=apollo&objects=projects');
      expect(found.body.data.search.map((h: { object: string; id: string }) => [h.object, h.id])).toContainEqual(['projects', record.id]);
      const groups = await rest(key, 'GET', '/rest/projects/groupBy?group_by=fSelect&aggregate=count,sum:fNumber');
      expect(groups.body.data.groups).toEqual([{ by: { fSelect: 'GOLD' }, count: 2, sum: { fNumber: '25.0' } }]);

      // The settings page lists the object and every field of it.
      await b.go(`${url}/settings/data-model`);
      expect(b.lastStatus).toBe(200);
      for (const t of FIELD_TYPES) expect(b.lastBody).toContain(fieldName(t.name));
      expect(b.lastBody).toContain('projects');

      // Nothing of it in the other workspace.
      expect((await rest(other.key, 'GET', '/rest/projects')).status).toBe(404);
      expect(JSON.stringify((await rest(other.key, 'GET', '/rest/open-api')).body)).not.toMatch(/[Pp]roject/);
      const otherAgent = await mcp(other.key);
      try {
        expect(JSON.stringify((await otherAgent.listTools()).tools)).not.toMatch(/project/i);
        const theirs = (await otherAgent.callTool({ name: 'describe_object', arguments: {} })) as CallToolResult;
        expect(JSON.stringify(theirs.structuredContent)).not.toMatch(/project/i);
        const probe = (await otherAgent.callTool({
          name: 'get_record',
          arguments: { object: 'projects', id: record.id },
        })) as CallToolResult;
        expect((probe.content[0] as { text: string }).text).toMatch(/^NOT_FOUND: /);
      } finally {
        await otherAgent.close();
      }
      expect((await gql(other.key, '{ __type(name: "Project") { name } }')).data.__type).toBeNull();
      expect(JSON.stringify((await rest(other.key, 'GET', '/rest/search?q=apollo')).body)).not.toMatch(/Apollo|projects/);
      expect(
        (await rest(other.key, 'GET', '/rest/metadata/objects')).body.data.objects.map((o: { namePlural: string }) => o.namePlural),
      ).not.toContain('projects');
      expect(ws.id).not.toBe(other.workspace.id);
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
