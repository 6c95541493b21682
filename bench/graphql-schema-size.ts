import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { buildSchema, type GraphQLSchema } from 'graphql';
import type { CustomField, WorkspaceObject } from '#records/objects/index.js';
import { WorkspaceModel } from '#records/service/data-model.js';
import { guardedSchema } from '../apps/records-api/src/graphql/restricted-schema.js';
import { schemaNodes } from '../apps/records-api/src/graphql/schema-copy.js';
import { workspaceSchema } from '../apps/records-api/src/graphql/workspace-schema.js';

/**
 * `npm run bench -- --graphql-schema-size` (docs/benchmark.md, "GraphQL schemas of custom
 * objects"; docs/decisions/0058-graphql-custom-objects.md): what one workspace schema with
 * custom objects costs the records API — the event loop's time to build it and its guarded
 * copy, and the heap it keeps — from one object of 10 fields to the most the limits
 * allow (50 custom objects of 100 fields). No server and no database: the builds are those of
 * workspace-graphql.ts, on the committed base schema. The fields cycle through six types
 * (TEXT, NUMBER, BOOLEAN, DATE_TIME, SELECT with two options, LINKS), as in
 * test/attack-graphql-schemas.e2e-spec.ts.
 */

const SHAPES: [objects: number, fields: number][] = [
  [1, 10],
  [10, 30],
  [50, 100],
];
const TYPES = ['TEXT', 'NUMBER', 'BOOLEAN', 'DATE_TIME', 'SELECT', 'LINKS'] as const;
const RUNS = 5;

function modelOf(objects: number, fieldsPerObject: number, version: number): WorkspaceModel {
  const made: WorkspaceObject[] = [];
  const fields: CustomField[] = [];
  for (let o = 0; o < objects; o++) {
    made.push({
      id: `o${o}`,
      nameSingular: `thing${o}`,
      namePlural: `things${o}`,
      labelSingular: 'Thing',
      labelPlural: 'Things',
      description: null,
      labelIdentifierField: 'name',
      isCustom: true,
      isActive: true,
      createdAt: '',
      updatedAt: '',
    });
    for (let f = 0; f < fieldsPerObject; f++) {
      const type = f === 0 ? 'TEXT' : TYPES[f % TYPES.length];
      fields.push({
        id: `${o}-${f}`,
        object: `things${o}`,
        name: f === 0 ? 'name' : `f${f}`,
        label: `Field ${f}`,
        description: null,
        type,
        isActive: true,
        isNullable: true,
        options:
          type === 'SELECT'
            ? [
                { value: 'GOLD', label: 'Gold', position: 0, color: 'yellow' },
                { value: 'SILVER', label: 'Silver', position: 1, color: 'gray' },
              ]
            : null,
        settings: null,
        defaultValue: null,
        isUnique: false,
        createdAt: '',
        updatedAt: '',
      });
    }
  }
  return new WorkspaceModel('bench', version, fields, made);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function graphqlSchemaSizeBench(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heap = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const base = buildSchema(readFileSync('apps/records-api/schema.gql', 'utf8'));
  console.log('GraphQL schemas of custom objects: one workspace schema, built as the records API builds it (median of 5 builds).');
  console.log(
    'objects × fields | schema nodes | build ms | longest hold of the event loop ms | guarded copy ms | heap kept per schema | per node',
  );
  let version = 1;
  for (const [objects, fieldsPerObject] of SHAPES) {
    await workspaceSchema(base, modelOf(objects, fieldsPerObject, version++)); // warm-up, not measured
    const builds: number[] = [];
    const holds: number[] = [];
    const guards: number[] = [];
    const kept: GraphQLSchema[] = [];
    const before = heap();
    for (let run = 0; run < RUNS; run++) {
      const model = modelOf(objects, fieldsPerObject, version++);
      // The build runs in turns of the loop (workspace-schema.ts): the longest turn is what other requests wait.
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      let started = performance.now();
      const schema = await workspaceSchema(base, model);
      builds.push(performance.now() - started);
      loop.disable();
      holds.push(loop.max / 1e6);
      started = performance.now();
      guardedSchema(schema, model);
      guards.push(performance.now() - started);
      kept.push(schema);
    }
    const bytes = (heap() - before) / RUNS;
    const nodes = schemaNodes(kept[0]);
    console.log(
      `${objects} × ${fieldsPerObject} | ${nodes} | ${median(builds).toFixed(0)} | ${median(holds).toFixed(0)} | ${median(guards).toFixed(0)} | ` +
        `${(bytes / 1024 / 1024).toFixed(2)} MB | ${Math.round(bytes / nodes)} B`,
    );
  }
}
