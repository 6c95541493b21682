import type { Readable } from 'node:stream';
import { z } from 'zod';
import { ImportsService } from '#records/imports/imports.service.js';
import { ExportsService } from '#records/service/exports.service.js';
import { exportArgs } from '#records/service/read-args.js';
import { ToolRefusal } from './confirmation.js';
import { dialectless } from './mcp-server.js';
import type { RecordTool } from './record-tools.js';
import type { TaskJob } from './tasks.js';

/*
 * Tools for long jobs (docs/mcp.md "Tasks"; docs/decisions/0065-mcp-tasks.md): an import and
 * an export, on the same services as `POST /rest/imports` and `GET /rest/<object>/export`,
 * run as tasks for clients that take them.
 */

/** The most an export_records file may take: it is kept in Postgres for its task's lifetime and read whole. */
export const EXPORT_MAX_BYTES = 4 * 1024 * 1024;
/** What import_records takes in `data`: the JSON body of /mcp is at most 1 MB (docs/security.md). */
const IMPORT_MAX_CHARS = 1_000_000;

// Bare on purpose: these schemas are in every tools/list, whose size is bounded (docs/mcp.md
// "Generic tools"); the arguments are those of the generic tools and of the REST export.
const formatArg = z.enum(['csv', 'ndjson']);
const inputs = {
  import: z.strictObject({ object: z.string(), format: formatArg, data: z.string().max(IMPORT_MAX_CHARS) }),
  export: z.strictObject({
    object: z.string(),
    format: formatArg.optional(),
    filter: z.string().optional(),
    fields: z.string().optional(),
  }),
};
const outputs = {
  import: z.object({ import: z.looseObject({}) }),
  export: z.object({ rows: z.number(), bytes: z.number(), uri: z.string().optional() }),
};
/** The hints that differ from MCP's defaults (ToolAnnotations): an import adds records, an export reads. */
const IMPORTS = { destructiveHint: false, openWorldHint: false };
const READS = { readOnlyHint: true, openWorldHint: false };
for (const schema of [...Object.values(inputs), ...Object.values(outputs)]) dialectless(schema);

/** The export's bytes as they come, counted for the task's progress, up to EXPORT_MAX_BYTES. */
async function collect(body: Readable, prefix: string, job: TaskJob): Promise<{ data: Buffer; rows: number }> {
  const parts: Buffer[] = [Buffer.from(prefix)];
  let bytes = parts[0].length;
  let rows = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (job.signal.aborted) throw new Error('cancelled');
    bytes += chunk.length;
    if (bytes > EXPORT_MAX_BYTES) {
      throw new ToolRefusal(
        'EXPORT_TOO_LARGE',
        `the export is larger than ${EXPORT_MAX_BYTES} bytes, the most export_records keeps; narrow filter or fields, or use GET /rest/<object>/export, which streams any size`,
      );
    }
    for (const byte of chunk) if (byte === 10) rows++;
    parts.push(chunk);
    await job.progress(rows, undefined, `${rows} rows, ${bytes} bytes exported`);
  }
  return { data: Buffer.concat(parts, bytes), rows };
}

async function* once(data: Buffer): AsyncIterable<Buffer> {
  yield data;
}

export function jobTools(imports: ImportsService, exports: ExportsService, objects: readonly string[]): RecordTool[] {
  const tool = (t: Omit<RecordTool, 'object' | 'objects'>): RecordTool => ({ ...t, object: objects[0], objects, long: true });
  return [
    tool({
      name: 'import_records',
      title: 'Import records',
      description: 'Imports CSV or NDJSON text (at most 1 MB) as POST /rest/imports does.',
      action: 'create',
      inputSchema: inputs.import,
      outputSchema: outputs.import,
      annotations: IMPORTS,
      async run(principal, args) {
        const data = Buffer.from(String(args.data), 'utf8');
        const request = {
          object: String(args.object),
          mode: 'create' as const,
          match: null,
          recordEvents: false,
          format: args.format as 'csv' | 'ndjson',
        };
        const started = await imports.start(principal, request, once(data), data.length);
        return {
          later: {
            importId: started.id,
            now: {
              structured: { import: started },
              summary: `Import ${started.id} queued: GET /rest/imports/${started.id} shows its progress.`,
            },
          },
        };
      },
    }),
    tool({
      name: 'export_records',
      title: 'Export records',
      description: 'Exports records as GET /rest/{object}/export does, at most 4 MiB; the result links the file.',
      action: 'read',
      inputSchema: inputs.export,
      outputSchema: outputs.export,
      annotations: READS,
      async run(principal, args) {
        const input = { format: (args.format as string | undefined) ?? 'csv', filter: args.filter, fields: args.fields };
        // Permissions, arguments and the workspace's export slot are settled here, before any task is made.
        const running = await exports.start(String(args.object), principal, (schema, names) => exportArgs(input, schema, names));
        return {
          later: {
            stored: true,
            abandon: () => running.finish(new Error('not started')),
            run: async (job) => {
              try {
                const { data, rows } = await collect(running.body, running.prefix, job);
                running.finish();
                return {
                  structured: { rows, bytes: data.length },
                  summary: `Exported ${rows} ${String(args.object)}.`,
                  file: { data, mimeType: running.contentType },
                };
              } catch (err) {
                running.finish(err);
                throw err;
              }
            },
          },
        };
      },
    }),
  ];
}
