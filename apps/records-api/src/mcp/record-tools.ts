import type { ToolAnnotations } from '@modelcontextprotocol/server';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { z } from 'zod';
import type { Principal } from '#auth/principal.js';
import { NotFoundError } from '#errors/errors.js';
import { fieldAccess, type FieldAccess } from '#auth/field-access.js';
import { BUILT_IN_UNIQUE_FIELDS, describeField, OBJECTS, relationFields, type ObjectDeclaration } from '#records/objects/index.js';
import { embeddedText } from '#records/service/embedded-text.js';
import { definitionFor, labelOf, type AnyRecord } from '#records/service/object-definitions.js';
import type { WorkspaceModel } from '#records/service/data-model.js';
import { ObjectService } from '#records/service/object-service.js';
import { inversesOf } from '#records/service/records.service.js';
import type { AskFirst, Confirmation } from './confirmation.js';
import type { Later } from './tasks.js';
import { dialectless, listedLength } from './mcp-server.js';
import { visibleSchema } from '#records/service/visible-schema.js';
import { groupByArgs, listArgs, pickFields, readArgs, type ListInput } from '#records/service/read-args.js';
import type { ListResult } from '#records/service/records.service.js';
import {
  aggregateInput,
  aggregateOutput,
  createInput,
  deleteInput,
  deletedOutput,
  getInput,
  listInput,
  listOutput,
  recordOutput,
  recordShape,
  recordWithEmbedded,
  updateInput,
  upsertInput,
  upsertOutput,
  without,
  type HiddenOf,
} from './tool-schemas.js';

/** What a tool hands back: the structured result and one line for people and models to read. */
export interface ToolOutcome {
  structured: Record<string, unknown>;
  summary: string;
}

/** One MCP tool: a thin call into the service layer, which checks the role and validates. */
export interface RecordTool {
  name: string;
  title: string;
  description: string;
  /** The permission the tool needs; tools the caller's role lacks are not listed. */
  object: string;
  /** A tool over several objects (aggregate_records, search_records) is listed when the role may act on any of them. */
  objects?: readonly string[];
  action: 'read' | 'create' | 'update' | 'delete';
  /** A second permission the tool needs on its object (upsert: create and update). */
  alsoNeeds?: 'update';
  inputSchema: z.ZodObject;
  outputSchema: z.ZodObject;
  annotations: ToolAnnotations;
  /** A long job (docs/mcp.md "Tasks"): a task for clients that take them; its run hands the work over as `later`. */
  long?: true;
  /** `confirmation`: for a change of many records, whether and what the user was asked (generic-tools.ts). */
  run(principal: Principal, args: Record<string, unknown>, confirmation?: Confirmation): Promise<ToolOutcome | AskFirst | { later: Later }>;
}

/** A list tool's arguments (REST's parameter names) as the records layer's typed list input. */
export function listInputOf(args: Record<string, unknown>): ListInput {
  return {
    limit: args.limit,
    orderBy: args.order_by,
    filter: args.filter,
    startingAfter: args.starting_after as string | undefined,
    endingBefore: args.ending_before as string | undefined,
    depth: args.depth,
    fields: args.fields,
  };
}

/** `3 of 120 companies.`, and how to read on when there is more. */
export function listSummary(page: ListResult<unknown>, plural: string): string {
  const shown = page.records.length;
  const more = page.pageInfo.hasNextPage ? ' More: pass pageInfo.endCursor as starting_after.' : '';
  return `${shown} of ${page.totalCount} ${plural}.${more}`;
}

/** `company "Acme" (id …)`: the first declared label path with a value (a composite joins its parts). */
function describeRecord(object: ObjectDeclaration, record: AnyRecord): string {
  const text = labelOf(object, record);
  return text ? `${object.singular} "${text}" (id ${record.id})` : `${object.singular} ${record.id}`;
}

export const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const CREATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
export const UPDATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
export const UPSERT: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
export const DELETE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

/*
 * The same hints in fewer bytes, for the tools every tools/list holds whatever the data model
 * (the generic, job, search and aggregate tools; docs/mcp.md "Generic tools"): the title is the
 * tool's own (MCP: it takes precedence over annotations.title), a read tool leaves out
 * destructiveHint, which MCP gives meaning only when readOnlyHint is false, and a write tool
 * readOnlyHint: false, MCP's default. The standard objects' own tools keep every hint they
 * always listed.
 */
export const BRIEF = {
  read: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  create: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
  update: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
  delete: { destructiveHint: true, idempotentHint: false, openWorldHint: false },
} satisfies Record<string, ToolAnnotations>;

/** docs/mcp.md; docs/architecture.md: five tools per object, from its declaration, over the same services as REST and GraphQL. */
export function objectTools(
  object: ObjectDeclaration,
  service: ObjectService,
  model?: WorkspaceModel,
  /** A role's field restrictions (by object): its tools neither show nor take the fields it may not read or update. */
  accessOf?: (plural: string) => FieldAccess | undefined,
): RecordTool[] {
  const { plural, singular } = object;
  const access = accessOf?.(plural);
  const schema = visibleSchema((model?.definition(plural) ?? definitionFor(plural)).schema, access?.hidden);
  const hiddenOf: HiddenOf | undefined = accessOf && ((name) => accessOf(name)?.hidden);
  const customOf = readableCustomFields(model, accessOf);
  const custom = customOf(plural);
  const writable = (model?.active(plural) ?? []).filter((f) => !access?.readOnly.has(f.name));
  // The workspace's own fields, named in the descriptions an agent reads (docs/data-model.md).
  const customNote = custom.length
    ? ` This workspace's custom fields (top-level properties, filtered and ordered like built-in ones): ${custom.map(describeField).join('; ')}.`
    : '';
  const a = `${object.article} ${singular}`;
  const embedded = embeddedText(object, 'tool');
  const they = object.pronoun === 'they';
  const possessive = they ? 'their' : 'its';
  const depthParts = [...relationFields(object).map((f) => f.relation), ...inversesOf(plural).map((inv) => inv.field.inverse)];
  // With `fields`, a record holds only the fields named and id: every other property is optional.
  const withEmbedded = recordWithEmbedded(object, customOf, hiddenOf)
    .partial()
    .required({ id: true })
    .meta({ description: 'The record; with fields, only the fields named (and id).' });
  const plain = recordShape(object, customOf, hiddenOf);
  const label = (record: AnyRecord) => describeRecord(object, record);
  return [
    {
      name: `list_${plural}`,
      title: `List ${plural}`,
      description:
        `Lists the ${plural} of the workspace, a page at a time, with the REST list syntax: filter, order_by, limit, ` +
        'cursors (starting_after / ending_before), depth and fields. Returns the page, totalCount (matching the filter) and pageInfo.' +
        customNote,
      object: plural,
      action: 'read',
      inputSchema: listInput(schema, embedded, {
        filter: object.docs.toolFilterExamples ?? Object.values(object.docs.filterExamples),
        orderBy: object.docs.toolOrderByExamples ?? Object.values(object.docs.orderByExamples),
      }),
      outputSchema: listOutput(plural, withEmbedded),
      annotations: { ...READ, title: `List ${plural}` },
      async run(principal, args) {
        const { depth, ...list } = listArgs(listInputOf(args), await service.schema(principal), await service.fieldNames(principal));
        const page = await service.list(principal, list, depth);
        const records = list.fields ? page.records.map((r) => pickFields(r, list.fields)) : page.records;
        return {
          structured: { [plural]: records, totalCount: page.totalCount, pageInfo: page.pageInfo },
          summary: listSummary(page, plural),
        };
      },
    },
    {
      name: `get_${singular}`,
      title: `Get ${a}`,
      description: `Reads one ${singular} by id${depthParts.length ? ` (with depth 1, also ${possessive} ${depthParts.join(' and ')})` : ''}. A deleted or unknown id is NOT_FOUND.`,
      object: plural,
      action: 'read',
      inputSchema: getInput(singular, embedded),
      outputSchema: recordOutput(singular, withEmbedded),
      annotations: { ...READ, title: `Get ${a}` },
      async run(principal, { id, ...query }) {
        const { depth, fields } = readArgs(query, await service.fieldNames(principal));
        const record = pickFields(await service.get(principal, String(id), depth, fields), fields);
        return { structured: { [singular]: record }, summary: `Found ${label(record)}.` };
      },
    },
    {
      name: `create_${singular}`,
      title: `Create ${a}`,
      description: object.docs.createTool + customNote,
      object: plural,
      action: 'create',
      inputSchema: without(createInput(object, writable), access?.readOnly),
      outputSchema: recordOutput(singular, plain),
      annotations: { ...CREATE, title: `Create ${a}` },
      async run(principal, args) {
        const record = await service.create(principal, args);
        return { structured: { [singular]: record }, summary: `Created ${label(record)}.` };
      },
    },
    {
      name: `upsert_${singular}`,
      title: `Create or update ${a}`,
      description:
        `Creates ${a}, or updates the live one it matches: by id, then by a unique field ` +
        `(${[...BUILT_IN_UNIQUE_FIELDS.filter((u) => u.object === plural).map((u) => u.field), 'unique custom fields'].join(', ')}), ` +
        'or only by the field named in match. ' +
        'A match is updated with the fields given; no match is created (then the fields a create needs are required). ' +
        'Says which happened. Safe to repeat: the same call twice gives one record.' +
        customNote,
      object: plural,
      action: 'create',
      alsoNeeds: 'update',
      inputSchema: without(upsertInput(object, writable), access?.readOnly),
      outputSchema: upsertOutput(singular, plain),
      annotations: { ...UPSERT, title: `Create or update ${a}` },
      async run(principal, { match, ...body }) {
        const result = await service.upsertMany(principal, [body], null, match === undefined ? undefined : String(match));
        const record = result.records[0];
        const outcome = result.created.length ? 'created' : 'updated';
        return {
          structured: { [singular]: record, outcome },
          summary: `${outcome === 'created' ? 'Created' : 'Updated'} ${label(record)}.`,
        };
      },
    },
    {
      name: `update_${singular}`,
      title: `Update ${a}`,
      description: object.docs.updateTool + customNote,
      object: plural,
      action: 'update',
      inputSchema: without(updateInput(object, writable), access?.readOnly),
      outputSchema: recordOutput(singular, plain),
      annotations: { ...UPDATE, title: `Update ${a}` },
      async run(principal, { id, ...changes }) {
        const record = await service.update(principal, String(id), changes);
        return { structured: { [singular]: record }, summary: `Updated ${label(record)}.` };
      },
    },
    {
      name: `delete_${singular}`,
      title: `Delete ${a}`,
      description:
        `Deletes ${a} (soft delete: ${they ? 'they disappear' : 'it disappears'} from lists and reads; list_${plural} with ` +
        `filter deletedAt[is]:NOT_NULL still shows ${they ? 'them' : 'it'}).${object.docs.deleteNote ? ` ${object.docs.deleteNote}` : ''}`,
      object: plural,
      action: 'delete',
      inputSchema: deleteInput(singular),
      outputSchema: deletedOutput,
      annotations: { ...DELETE, title: `Delete ${a}` },
      async run(principal, { id }) {
        const deleted = await service.delete(principal, String(id));
        return { structured: deleted, summary: `Deleted ${singular} ${deleted.id}.` };
      },
    },
  ];
}

/*
 * A tool's `run` keeps what the function that made it refers to from any closure: no
 * closure there refers to the workspace model, so a kept tool list never keeps its model
 * (50 objects of 100 fields: 5.5 MB of definitions) alive; these helpers make what needs it.
 */

/** The active custom fields of each object, less those the role cannot read. */
function readableCustomFields(model: WorkspaceModel | undefined, accessOf?: (plural: string) => FieldAccess | undefined) {
  return (name: string) => (model?.active(name) ?? []).filter((f) => !accessOf?.(name)?.hidden.has(f.name));
}

/** What each object groups by and sums, for aggregate_records' description. */
function groupableFields(
  plurals: readonly string[],
  model?: WorkspaceModel,
  accessOf?: (plural: string) => FieldAccess | undefined,
): string {
  return plurals
    .map((plural) => {
      const schema = visibleSchema((model?.definition(plural) ?? definitionFor(plural)).schema, accessOf?.(plural)?.hidden);
      const of = (types: string[]) =>
        Object.values(schema.fields)
          .filter((f) => types.includes(f.type))
          .map((f) => f.path)
          .join(', ');
      return `${plural}: group by ${of(['enum', 'boolean', 'text', 'date', 'timestamp'])}; sum/avg ${of(['bigint', 'number']) || 'none'}`;
    })
    .join('. ');
}

/**
 * `aggregate_records` (docs/mcp.md): groups and aggregates of one object, with REST's
 * `group_by`, `aggregate` and `filter` syntax; the service checks read permission (FORBIDDEN).
 */
export function aggregateTool(
  /** The service of each object the tool groups, by plural name: the standard ones, then the workspace's own. */
  services: ReadonlyMap<string, ObjectService>,
  model?: WorkspaceModel,
  accessOf?: (plural: string) => FieldAccess | undefined,
): RecordTool {
  const plurals = [...services.keys()];
  // The standard objects' fields are told here; a workspace's own objects (up to 50, of up to
  // 100 fields each) by describe_object, so the description stays the same size.
  const own = plurals.filter((p) => !OBJECTS.some((o) => o.plural === p));
  const fieldsNote =
    groupableFields(
      plurals.filter((p) => !own.includes(p)),
      model,
      accessOf,
    ) + (own.length ? '; own objects: see describe_object' : '');
  return {
    name: 'aggregate_records',
    title: 'Aggregate records',
    description:
      'Groups the live records of one object (filtered with the list filter syntax) and aggregates each group: count, ' +
      'sum:<field>, avg:<field> (exact decimal strings), min:<field>, max:<field>. group_by takes up to 3 fields; dates take ' +
      ':day, :week, :month, :quarter or :year (UTC). Groups come ordered by their keys; more than 1000 is TOO_MANY_GROUPS. ' +
      `Fields: ${fieldsNote}.`,
    object: plurals[0],
    objects: plurals,
    action: 'read',
    inputSchema: dialectless(aggregateInput(plurals, own.length > 0)),
    outputSchema: dialectless(aggregateOutput),
    annotations: BRIEF.read,
    async run(principal, args) {
      const service = services.get(String(args.object));
      if (!service) throw new NotFoundError(`No object ${String(args.object)} in this workspace`);
      const groups = await service.groupBy(principal, (schema) =>
        groupByArgs({ groupBy: args.group_by, aggregate: args.aggregate, filter: args.filter }, schema),
      );
      return { structured: { groups }, summary: `${groups.length} group${groups.length === 1 ? '' : 's'} of ${String(args.object)}.` };
    },
  };
}

/** The tools of every object; `services` in the order of OBJECTS (companies, people, …), as ObjectServices holds them. */
export function recordTools(...services: ObjectService[]): RecordTool[] {
  return [
    ...services.flatMap((service, i) => objectTools(OBJECTS[i], service)),
    aggregateTool(new Map(OBJECTS.map((o, i) => [o.plural, services[i]]))),
  ];
}

/**
 * The most a tools/list answer may take (docs/mcp.md "Generic tools";
 * docs/decisions/0064-generic-mcp-tools.md): custom objects add nothing to it (the list is
 * 28 tools and under 64 KB with 50 of them), custom fields on the standard objects grow those
 * objects' own tools, which are listed, object by object, while the whole list fits 96 KB;
 * an object whose tools would not is reached through the generic tools. The JSON-RPC
 * envelope around the tools takes the rest.
 */
export const TOOL_LIST_BYTES = 96 * 1024 - 128;

/** A workspace's tools: the standard objects' (as many as fit), then those every object shares. */
export interface WorkspaceTools {
  tools: RecordTool[];
  /** Standard objects whose own tools did not fit TOOL_LIST_BYTES. */
  withoutTools: string[];
}

/**
 * The tools as a workspace with custom fields or objects sees them (the standard objects'
 * tools with its custom fields in their schemas and descriptions; its own objects are reached
 * through the generic tools, generic-tools.ts, and aggregate_records), and as a role with
 * field restrictions sees them (`principal`: without the fields it may not read, or update on
 * writes). `shared`: the tools listed whatever the model (search, the generic tools). Which
 * tools a role may use is decided per request (mcp-server.ts), so one list serves every role.
 */
export async function workspaceTools(
  services: readonly ObjectService[],
  model: WorkspaceModel,
  shared: readonly RecordTool[],
  principal?: Principal,
): Promise<WorkspaceTools> {
  const accessOf = principal && ((plural: string) => fieldAccess(principal, plural));
  const byPlural = new Map(OBJECTS.map((o, i) => [o.plural, services[i]]));
  for (const object of model.objects.filter((o) => o.isActive)) {
    byPlural.set(object.namePlural, new ObjectService(services[0].records, object.namePlural));
  }
  const common = [aggregateTool(byPlural, model, accessOf), ...shared];
  let spent = listedLength(common);
  const tools: RecordTool[] = [];
  const withoutTools: string[] = [];
  for (const [i, object] of OBJECTS.entries()) {
    // An object's tools take a few milliseconds to make and convert: one object per turn of the event loop.
    await yieldToEventLoop();
    const made = objectTools(object, services[i], model, accessOf);
    const length = listedLength(made);
    if (spent + length > TOOL_LIST_BYTES) withoutTools.push(object.plural);
    else {
      tools.push(...made);
      spent += length;
    }
  }
  return { tools: [...tools, ...common], withoutTools };
}
