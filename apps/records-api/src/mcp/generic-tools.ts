import { z } from 'zod';
import { assertCan, can, type Principal } from '#auth/principal.js';
import { fieldAccess } from '#auth/field-access.js';
import { customObjectDeclaration, customRelation, OBJECTS, standardFields, type FieldSummary } from '#records/objects/index.js';
import { parseFilter } from '#records/query/index.js';
import type { DataModel } from '#records/service/data-model.js';
import { listArgs, pickFields, readArgs } from '#records/service/read-args.js';
import type { RecordsService } from '#records/service/records.service.js';
import { dialectless } from './mcp-server.js';
import { ConfirmationRequired, type AskFirst, type Confirmation } from './confirmation.js';
import { BRIEF, listInputOf, listSummary, type RecordTool, type ToolOutcome } from './record-tools.js';
import type { Later } from './tasks.js';

/*
 * Tools over every object of the workspace, custom ones included, taking the object's
 * plural name (docs/mcp.md "Generic tools"): the tool list stays the same size whatever
 * the data model (a workspace's 50 custom objects made 300 per-object tools), and an
 * agent learns an object's fields from describe_object. Each calls the records layer as
 * REST does, so permissions, field permissions, validation and errors are REST's.
 */

/** Records a dry run shows of what a change by filter would touch. */
const DRY_RUN_SAMPLE = 10;

// Terse on purpose: these schemas are in every tools/list (docs/mcp.md "Generic tools").
/** The object's plural name: the tools' descriptions say so once (describe_object), not each schema. */
const objectArg = z.string();
const idArg = z.string();
const dataArg = z.looseObject({}).meta({ description: 'Fields as REST takes them' });
const depthArg = z.literal([0, 1]).optional();
const fieldsArg = z.string().optional().meta({ description: 'Comma list of fields' });
const filterArg = (required: boolean) => (required ? z.string().min(1) : z.string().optional());
// What they do is the tools' descriptions' (update_records, delete_records).
const changeArgs = { dryRun: z.boolean().optional(), confirm: z.boolean().optional() };
/** A record: its shape is the object's (describe_object), not repeated here. */
const record = z.unknown();
const changedOutput = z.object({
  count: z.number(),
  ids: z.array(z.string()).optional(),
  dryRun: z.boolean().optional(),
  records: z.array(record).optional(),
  confirmed: z.boolean().optional(),
});

/** What describe_object says of a field (its output schema leaves the shape open: it is in every tools/list). */
interface FieldOutput {
  name: string;
  type: string;
  label: string;
  description: string | null;
  isNullable: boolean;
  isCustom: boolean;
  options?: string[];
  relation?: { targetObject: string; name: string };
  readOnly?: boolean;
}
interface ObjectOutput {
  namePlural: string;
  nameSingular: string;
  labelPlural: string;
  labelSingular: string;
  isCustom: boolean;
  labelIdentifierField: string;
  fields?: FieldOutput[];
  /** What depth 1 embeds (docs/mcp.md): each linked record (`idField` holds its id) and each list of records linking to it. */
  relations?: { name: string; type: 'MANY_TO_ONE' | 'ONE_TO_MANY'; targetObject: string; idField?: string }[];
}

const inputs = {
  describe: z.strictObject({ object: objectArg.optional() }),
  list: z.strictObject({
    object: objectArg,
    filter: filterArg(false),
    order_by: z.string().optional(),
    limit: z.number().optional(),
    starting_after: z.string().optional(),
    ending_before: z.string().optional(),
    depth: depthArg,
    fields: fieldsArg,
  }),
  get: z.strictObject({ object: objectArg, id: idArg, depth: depthArg, fields: fieldsArg }),
  create: z.strictObject({ object: objectArg, data: dataArg }),
  update: z.strictObject({ object: objectArg, id: idArg, data: dataArg }),
  delete: z.strictObject({ object: objectArg, id: idArg }),
  updateMany: z.strictObject({ object: objectArg, filter: filterArg(true), data: dataArg, ...changeArgs }),
  deleteMany: z.strictObject({ object: objectArg, filter: filterArg(true), ...changeArgs }),
};
const outputs = {
  describe: z.object({ objects: z.array(z.looseObject({ namePlural: z.string() })) }),
  list: z.object({ records: z.array(record), totalCount: z.number(), pageInfo: z.looseObject({}) }),
  record: z.object({ record: z.looseObject({}) }),
  deleted: z.object({ id: z.string() }),
  changed: changedOutput,
};
for (const schema of [...Object.values(inputs), ...Object.values(outputs)]) dialectless(schema);

/** The workspace's objects as an agent needs them, less the fields the role cannot read. */
async function describe(models: DataModel, principal: Principal, only?: string): Promise<ObjectOutput[]> {
  const model = await models.of(principal);
  const plurals = only === undefined ? model.served : [only];
  if (only !== undefined) {
    model.definition(only); // NOT_FOUND for an object this workspace does not serve
    assertCan(principal, only, 'read');
  }
  return plurals
    .filter((plural) => can(principal, plural, 'read'))
    .map((plural) => {
      const custom = model.customObject(plural);
      const declared = OBJECTS.find((o) => o.plural === plural);
      const singular = custom?.nameSingular ?? declared!.singular;
      const access = fieldAccess(principal, plural);
      const summaries: FieldSummary[] = [
        ...standardFields(declared ?? customObjectDeclaration(custom!)),
        ...model.active(plural).map((f) => {
          const link = customRelation(f);
          return {
            name: f.name,
            label: f.label,
            description: f.description,
            type: f.type,
            isCustom: true,
            isNullable: f.isNullable,
            isActive: true,
            options: f.options?.map((o, position) => ({ ...o, position })),
            ...(link ? { relation: { type: link.relationType, targetObject: link.targetObject, name: link.relationName } } : {}),
          };
        }),
      ];
      const def = model.definition(plural);
      const relations: NonNullable<ObjectOutput['relations']> = [
        ...def.relations.map(({ field }) => ({
          name: field.relation,
          type: 'MANY_TO_ONE' as const,
          targetObject: field.target,
          idField: field.name,
        })),
        ...def.inverses.map(({ source, field }) => ({ name: field.inverse, type: 'ONE_TO_MANY' as const, targetObject: source.plural })),
      ].filter((r) => can(principal, r.targetObject, 'read'));
      return {
        namePlural: plural,
        nameSingular: singular,
        labelPlural: custom?.labelPlural ?? cap(plural),
        labelSingular: custom?.labelSingular ?? cap(singular),
        isCustom: custom !== undefined,
        labelIdentifierField: custom?.labelIdentifierField ?? declared!.label[0].split('.')[0],
        ...(only === undefined
          ? {}
          : {
              fields: summaries
                .filter((f) => !access?.hidden.has(f.name))
                .map((f) => ({
                  name: f.name,
                  type: f.type,
                  label: f.label,
                  description: f.description,
                  isNullable: f.isNullable,
                  isCustom: f.isCustom,
                  ...(f.options ? { options: f.options.map((o) => o.value) } : {}),
                  ...(f.relation ? { relation: { targetObject: f.relation.targetObject, name: f.relation.name } } : {}),
                  ...(access?.readOnly.has(f.name) ? { readOnly: true } : {}),
                })),
              relations,
            }),
      };
    });
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * A change of every record a filter keeps (update_records, delete_records): a dry run
 * counts and shows the first records and writes nothing; otherwise the user agrees
 * first — asked by the client when it can, else `confirm: true` says they did.
 */
async function changeByFilter(
  records: RecordsService,
  principal: Principal,
  args: Record<string, unknown>,
  action: 'update' | 'delete',
  confirmation: Confirmation | undefined,
  change: (plural: string, filter: ReturnType<typeof parseFilter>) => Promise<{ count: number; ids: string[] }>,
): Promise<ToolOutcome | AskFirst | { later: Later }> {
  const plural = String(args.object);
  const def = await records.definitionFor(plural, principal);
  assertCan(principal, plural, action);
  const filter = parseFilter(args.filter, def.schema);
  const verb = action === 'update' ? 'Update' : 'Delete';
  if (args.dryRun === true || (confirmation?.canAsk && confirmation.answer === undefined)) {
    const list = listArgs({ filter: args.filter, limit: DRY_RUN_SAMPLE }, def.schema, await records.fieldNames(plural, principal));
    const page = await records.list(plural, principal, list);
    if (args.dryRun !== true) {
      return { ask: `${verb} ${page.totalCount} ${plural} matching ${String(args.filter)}? This cannot be undone in one step.` };
    }
    return {
      structured: { dryRun: true, count: page.totalCount, records: page.records },
      summary: `Dry run: ${page.totalCount} ${plural} match; nothing changed.`,
    };
  }
  if (confirmation?.canAsk ? confirmation.answer !== 'accept' : args.confirm !== true) {
    if (confirmation?.canAsk) return { structured: { count: 0, confirmed: false }, summary: 'The user declined: nothing changed.' };
    throw new ConfirmationRequired(
      `${verb} ${plural} by filter changes every matching record: show the user what a dryRun: true call finds, then call again with confirm: true once they agree`,
    );
  }
  // The change itself is the long part: a task for a client that takes them (docs/mcp.md "Tasks").
  return {
    later: {
      run: async (job) => {
        if (job.tracked) {
          const count = await records.list(
            plural,
            principal,
            listArgs({ filter: args.filter, limit: 1 }, def.schema, await records.fieldNames(plural, principal)),
          );
          await job.progress(
            0,
            count.totalCount ?? undefined,
            `${verb === 'Update' ? 'Updating' : 'Deleting'} ${count.totalCount ?? 'the matching'} ${plural}`,
          );
        }
        // One transaction: once it starts it cannot be cancelled half way.
        if (!(await job.startWriting())) throw new Error('cancelled');
        const result = await change(plural, filter);
        return { structured: { count: result.count, ids: result.ids }, summary: `${verb}d ${result.count} ${plural}.` };
      },
    },
  };
}

/** The generic tools; `objects`: the plural names the workspace serves, for which tools a role is shown. */
export function genericTools(records: RecordsService, models: DataModel, objects: readonly string[]): RecordTool[] {
  const tool = (t: Omit<RecordTool, 'object' | 'objects'>): RecordTool => ({ ...t, object: objects[0], objects });
  return [
    tool({
      name: 'describe_object',
      title: 'Describe objects',
      description: "Lists the objects (their plural names are every tool's object); with object, its fields as data takes them.",
      action: 'read',
      inputSchema: inputs.describe,
      outputSchema: outputs.describe,
      annotations: BRIEF.read,
      async run(principal, args) {
        const described = await describe(models, principal, args.object as string | undefined);
        return {
          structured: { objects: described },
          summary: described
            .map((o) => `${o.namePlural}${o.fields ? ` (${o.fields.map((f) => `${f.name}: ${f.type}`).join(', ')})` : ''}`)
            .join('; '),
        };
      },
    }),
    tool({
      name: 'list_records',
      title: 'List records',
      description: "A page of an object's records; filter, order_by and cursors as list_companies takes them.",
      action: 'read',
      inputSchema: inputs.list,
      outputSchema: outputs.list,
      annotations: BRIEF.read,
      async run(principal, args) {
        const plural = String(args.object);
        const def = await records.definitionFor(plural, principal);
        const { depth, ...list } = listArgs(listInputOf(args), def.schema, await records.fieldNames(plural, principal));
        const page = await records.list(plural, principal, list, depth);
        const rows = list.fields ? page.records.map((r) => pickFields(r, list.fields)) : page.records;
        return { structured: { records: rows, totalCount: page.totalCount, pageInfo: page.pageInfo }, summary: listSummary(page, plural) };
      },
    }),
    tool({
      name: 'get_record',
      title: 'Get a record',
      description: 'One record by id (NOT_FOUND if deleted or unknown).',
      action: 'read',
      inputSchema: inputs.get,
      outputSchema: outputs.record,
      annotations: BRIEF.read,
      async run(principal, args) {
        const plural = String(args.object);
        const { depth, fields } = readArgs(args, await records.fieldNames(plural, principal));
        const found = pickFields(await records.get(plural, principal, String(args.id), depth, fields), fields);
        return { structured: { record: found }, summary: `Found ${plural} ${found.id}.` };
      },
    }),
    tool({
      name: 'create_record',
      title: 'Create a record',
      description: 'Creates a record from data.',
      action: 'create',
      inputSchema: inputs.create,
      outputSchema: outputs.record,
      annotations: BRIEF.create,
      async run(principal, args) {
        const made = await records.create(String(args.object), principal, args.data);
        return { structured: { record: made }, summary: `Created ${String(args.object)} ${made.id}.` };
      },
    }),
    tool({
      name: 'update_record',
      title: 'Update a record',
      description: 'Changes the fields in data of one record; others keep their value.',
      action: 'update',
      inputSchema: inputs.update,
      outputSchema: outputs.record,
      annotations: BRIEF.update,
      async run(principal, args) {
        const changed = await records.update(String(args.object), principal, String(args.id), args.data);
        return { structured: { record: changed }, summary: `Updated ${String(args.object)} ${changed.id}.` };
      },
    }),
    tool({
      name: 'delete_record',
      title: 'Delete a record',
      description: 'Soft-deletes one record (deletedAt[is]:NOT_NULL lists it).',
      action: 'delete',
      inputSchema: inputs.delete,
      outputSchema: outputs.deleted,
      annotations: BRIEF.delete,
      async run(principal, args) {
        const deleted = await records.delete(String(args.object), principal, String(args.id));
        return { structured: deleted, summary: `Deleted ${String(args.object)} ${deleted.id}.` };
      },
    }),
    tool({
      name: 'update_records',
      title: 'Update records by filter',
      description:
        'Sets data on every record the filter keeps. Try dryRun first; the user confirms (asked by your client, or confirm: true).',
      action: 'update',
      inputSchema: inputs.updateMany,
      outputSchema: outputs.changed,
      annotations: BRIEF.update,
      long: true,
      run: (principal, args, confirmation) =>
        changeByFilter(records, principal, args, 'update', confirmation, (plural, filter) =>
          records.updateByFilter(plural, principal, filter, args.data),
        ),
    }),
    tool({
      name: 'delete_records',
      title: 'Delete records by filter',
      description:
        'Soft-deletes every record the filter keeps. Try dryRun first; the user confirms (asked by your client, or confirm: true).',
      action: 'delete',
      inputSchema: inputs.deleteMany,
      outputSchema: outputs.changed,
      annotations: BRIEF.delete,
      long: true,
      run: (principal, args, confirmation) =>
        changeByFilter(records, principal, args, 'delete', confirmation, (plural, filter) =>
          records.deleteByFilter(plural, principal, filter),
        ),
    }),
  ];
}
