import type { INestApplication } from '@nestjs/common';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import { readFileSync, writeFileSync } from 'node:fs';
import {
  buildSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  printSchema,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi } from './factories.js';

/*
 * Companies and people look the same to clients before and after their surfaces were
 * generated from one declaration per object (issue 11): the GraphQL schema, the OpenAPI
 * document and the MCP tools of both objects are compared with snapshots taken before the
 * change. Additions (new objects, new fields, new optional arguments) are allowed; a
 * changed or removed name, type, description or schema is not.
 * `SNAPSHOT_WRITE=1` writes the current surfaces as the new baselines (review the diff).
 */

const DIR = 'test/snapshots';
const WRITE = process.env.SNAPSHOT_WRITE === '1';
const OBJECT_TOOLS = /_(company|companies|person|people)$/;

type Http = Parameters<typeof request>[0];

function snapshot<T>(file: string, current: T, serialize: (v: T) => string, parse: (s: string) => T): T {
  if (WRITE) writeFileSync(`${DIR}/${file}`, serialize(current));
  return parse(readFileSync(`${DIR}/${file}`, 'utf8'));
}

const argString = (a: GraphQLArgument | GraphQLInputField) => `${a.name}: ${String(a.type)} ${a.description ?? ''}`;

/** What changed in `now` against `before`, as readable lines; new optional things are allowed. */
function schemaChanges(before: GraphQLSchema, now: GraphQLSchema): string[] {
  const changes: string[] = [];
  for (const type of Object.values(before.getTypeMap()) as GraphQLNamedType[]) {
    if (type.name.startsWith('__')) continue;
    const other = now.getType(type.name);
    if (!other) {
      changes.push(`type ${type.name} is gone`);
      continue;
    }
    if (other.constructor !== type.constructor) changes.push(`type ${type.name} changed kind`);
    if ((other.description ?? '') !== (type.description ?? '')) changes.push(`type ${type.name} changed description`);
    if (isEnumType(type) && isEnumType(other)) {
      const was = type
        .getValues()
        .map((v) => `${v.name} ${v.description ?? ''}`)
        .join('|');
      const is = other
        .getValues()
        .map((v) => `${v.name} ${v.description ?? ''}`)
        .join('|');
      if (was !== is) changes.push(`enum ${type.name} changed values`);
    }
    if ((isObjectType(type) || isInterfaceType(type)) && (isObjectType(other) || isInterfaceType(other))) {
      const fields = other.getFields() as Record<string, GraphQLField<unknown, unknown>>;
      for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
        const now = fields[field.name];
        if (!now) {
          changes.push(`${type.name}.${field.name} is gone`);
          continue;
        }
        if (String(now.type) !== String(field.type)) changes.push(`${type.name}.${field.name}: ${field.type} → ${now.type}`);
        if ((now.description ?? '') !== (field.description ?? '')) changes.push(`${type.name}.${field.name} changed description`);
        const args = new Map(now.args.map((a) => [a.name, a]));
        for (const arg of field.args) {
          const a = args.get(arg.name);
          if (!a || argString(a) !== argString(arg)) changes.push(`${type.name}.${field.name}(${arg.name}) changed`);
          args.delete(arg.name);
        }
        for (const added of args.values()) {
          if (isNonNullType(added.type)) changes.push(`${type.name}.${field.name}(${added.name}) is a new required argument`);
        }
      }
    }
    if (isInputObjectType(type) && isInputObjectType(other)) {
      const fields = other.getFields();
      for (const field of Object.values(type.getFields())) {
        const now = fields[field.name];
        if (!now || argString(now) !== argString(field)) changes.push(`${type.name}.${field.name} changed`);
      }
      for (const added of Object.values(fields)) {
        if (!type.getFields()[added.name] && isNonNullType(added.type))
          changes.push(`${type.name}.${added.name} is a new required input field`);
      }
    }
  }
  return changes;
}

describe('companies and people: the same surfaces as before the object declarations', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  it('GraphQL: every type, field, argument and description of the baseline schema is unchanged', () => {
    const current = printSchema(app.get(GraphQLSchemaHost).schema);
    const before = snapshot(
      'schema-companies-people.gql',
      current,
      (s) => s,
      (s) => s,
    );
    const changes = schemaChanges(buildSchema(before), buildSchema(current));
    expect(changes).toEqual([]);
    // The comparison itself notices a change.
    expect(
      schemaChanges(buildSchema(before), buildSchema(before.replace('type Company {', 'type Company {\n  extra: Int!\n  x: Int'))),
    ).toEqual([]);
    expect(schemaChanges(buildSchema(before), buildSchema(before.replace(/(type Company \{[^}]*\n\s*name: )String!/, '$1String')))).toEqual(
      ['Company.name: String! → String'],
    );
  });

  it('OpenAPI: every path and component of the baseline document is unchanged', async () => {
    const doc = (await request(http).get('/rest/open-api').expect(200)).body;
    const before = snapshot(
      'open-api-companies-people.json',
      doc,
      (d) => `${JSON.stringify(d, null, 2)}\n`,
      (s) => JSON.parse(s),
    );
    expect(Object.keys(before.paths).length).toBe(6);
    for (const [path, operations] of Object.entries(before.paths)) {
      expect({ path, operations: doc.paths[path] }).toEqual({ path, operations });
    }
    for (const [name, schema] of Object.entries(before.components.schemas)) {
      expect({ name, schema: doc.components.schemas[name] }).toEqual({ name, schema });
    }
    expect(doc.components.securitySchemes).toEqual(before.components.securitySchemes);
    for (const tag of before.tags) expect(doc.tags).toContainEqual(tag);
  });

  it('MCP: the twelve tools of companies and people keep their names, schemas, descriptions and annotations', async () => {
    const ws = await newWorkspace(ds, 'surfaces');
    const res = await request(http)
      .post('/mcp')
      .set(bearer(ws.keys.Admin))
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
      .expect(200);
    const tools = (res.body.result.tools as { name: string }[]).filter((t) => OBJECT_TOOLS.test(t.name));
    const before = snapshot(
      'mcp-tools-companies-people.json',
      tools,
      (t) => `${JSON.stringify(t, null, 2)}\n`,
      (s) => JSON.parse(s),
    );
    // Twelve: upsert_company and upsert_person were added on purpose (docs/rest.md "Upsert").
    expect(before).toHaveLength(12);
    // Two changes are the MCP v2 SDK's (docs/mcp.md), made on purpose: schemas say JSON Schema
    // 2020-12 (the default dialect since MCP 2025-11-25) instead of draft-07, and the v1-only
    // `execution.taskSupport` hint is gone. Everything else is as it was, to the letter.
    const servedByV2 = ({ execution: _execution, ...tool }: Record<string, unknown>) => ({
      ...tool,
      inputSchema: { ...(tool.inputSchema as object), $schema: 'https://json-schema.org/draft/2020-12/schema' },
      outputSchema: { ...(tool.outputSchema as object), $schema: 'https://json-schema.org/draft/2020-12/schema' },
    });
    for (const tool of before) {
      expect(tools.find((t) => t.name === tool.name)).toEqual(servedByV2(tool as unknown as Record<string, unknown>));
    }
  });
});
