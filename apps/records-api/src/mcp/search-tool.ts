import { z } from 'zod';
import {
  MAX_QUERY_LENGTH,
  MAX_SEARCH_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  SEARCHABLE_OBJECTS,
  type SearchService,
} from '#records/service/search.service.js';
import { READ, type RecordTool } from './record-tools.js';
import { dialectless } from './mcp-server.js';

const inputSchema = z.object({
  q: z
    .string()
    .meta({ description: `1 to ${MAX_QUERY_LENGTH} characters. Every word matches by prefix; words of 4+ letters also with one typo.` }),
  objects: z
    // Each name is checked by the search service (unknown: VALIDATION_FAILED); a workspace has at most 53 objects.
    .array(z.string())
    .max(100)
    .optional()
    .meta({
      description: 'Plural names; default: every object your role can read (naming one it cannot read is FORBIDDEN).',
    }),
  // An integer, checked by the search service (a JSON Schema integer spells out ±2^53 in every tools/list).
  limit: z
    .number()
    .optional()
    .meta({ description: `1 to ${MAX_SEARCH_LIMIT}; default ${DEFAULT_SEARCH_LIMIT}.` }),
  starting_after: z.string().optional().meta({ description: 'pageInfo.endCursor of the previous page' }),
});

const outputSchema = z.object({
  search: z.array(
    z.object({
      object: z.string(),
      id: z.string(),
      label: z.string(),
      score: z.number(),
      record: z.looseObject({}),
    }),
  ),
  pageInfo: z.object({
    hasNextPage: z.boolean(),
    hasPreviousPage: z.boolean(),
    startCursor: z.string().nullable(),
    endCursor: z.string().nullable(),
  }),
});

/** `search_records` (docs/mcp.md): read-only, listed when the role can read at least one searchable object. */
export function searchTool(service: SearchService): RecordTool {
  return {
    name: 'search_records',
    title: 'Search records',
    description:
      'Finds records of any object by name, e-mail, domain, phone or text fields: every word of q by prefix, any case and accents, ' +
      'one typo in words of 4+ letters; best first. Read or change a result with get_record / update_record and its id.',
    object: SEARCHABLE_OBJECTS[0],
    action: 'read',
    objects: SEARCHABLE_OBJECTS,
    inputSchema: dialectless(inputSchema),
    outputSchema: dialectless(outputSchema),
    annotations: { ...READ, title: 'Search records' },
    async run(principal, args) {
      const result = await service.search(principal, {
        q: args.q,
        objects: args.objects as string[] | undefined,
        limit: args.limit as number | undefined,
        after: (args.starting_after as string | undefined) || undefined,
        afterParam: 'starting_after',
      });
      const search = result.hits.map(({ object, id, label, score, record }) => ({ object, id, label, score, record }));
      const more = result.pageInfo.hasNextPage ? ' More: pass pageInfo.endCursor as starting_after.' : '';
      const lines = search.map((h) => `${h.object} "${h.label}" (id ${h.id})`).join('; ');
      return {
        structured: { search, pageInfo: result.pageInfo },
        summary: `${search.length} result${search.length === 1 ? '' : 's'}${lines ? `: ${lines}` : ''}.${more}`,
      };
    },
  };
}
