import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { Principal } from '#auth/principal.js';
import { Sql } from '#database/sql.js';
import { NotFoundError } from '#errors/errors.js';
import { toField } from '#identity/data-model.js';
import { OBJECT_COLUMNS, toObject } from '#identity/objects.js';
import {
  absentValue,
  customCompositeSort,
  customObjectDeclaration,
  customQueryFields,
  customRelation,
  fullComposite,
  linkKey,
  OBJECTS,
  ownValue,
  valueField,
  type CustomField,
  type ObjectDeclaration,
  type RelationField,
  type WorkspaceObject,
} from '../objects/index.js';
import { relationsOf } from '../objects/query-schema.js';
import { customObjectDefinition, definitionFor, type AnyRecord, type ObjectDefinition } from './object-definitions.js';

/** A custom relation served, seen from its source object: its link, and where the target's records are. */
export interface CustomLink {
  source: ObjectDeclaration;
  sourceObjectId?: string;
  field: RelationField & { fieldId: string };
  targetTable: string;
  targetSingular: string;
  targetObjectId?: string;
}

/** A workspace's data model at one version: its custom objects and fields, and each object's definition with them. */
export class WorkspaceModel {
  private readonly definitions = new Map<string, ObjectDefinition>();

  constructor(
    readonly workspaceId: string,
    readonly version: number,
    /** Every custom field, active or not. */
    readonly fields: readonly CustomField[],
    /** Every custom object, active or not (the standard ones are every workspace's). */
    readonly objects: readonly WorkspaceObject[] = [],
  ) {}

  /** The active custom object named `plural` (its plural name), if any. */
  customObject(plural: string): WorkspaceObject | undefined {
    return this.objects.find((o) => o.namePlural === plural && o.isActive);
  }

  /** Whether `plural` is an object this workspace serves: a standard one, or an active custom one. */
  has(plural: string): boolean {
    return OBJECTS.some((o) => o.plural === plural) || this.customObject(plural) !== undefined;
  }

  /** The plural names of every object served, standard first. */
  get served(): string[] {
    return [...OBJECTS.map((o) => o.plural), ...this.objects.filter((o) => o.isActive).map((o) => o.namePlural)];
  }

  /** Names this model in caches of what is made from it (GraphQL servers, OpenAPI documents, MCP tools). */
  get key(): string {
    return `${this.workspaceId}:${this.version}`;
  }

  /**
   * The fields of `plural` the API shows as values of its records (a deactivated field is
   * hidden everywhere): a relation's MANY_TO_ONE side as its id `<name>Id` while both its
   * objects are served; a ONE_TO_MANY side holds no value (docs/decisions/0066-relations.md).
   */
  active(plural: string): CustomField[] {
    return this.valueFields.filter((f) => f.object === plural);
  }

  /** Every active field as a value of its records (`active`), in the order the fields were made. */
  get valueFields(): CustomField[] {
    return (this.values ??= this.fields.flatMap((f) => {
      if (!f.isActive) return [];
      const link = customRelation(f);
      if (link && (!this.has(f.object) || !this.has(link.targetObject))) return [];
      return valueField(f) ?? [];
    }));
  }
  private values?: CustomField[];

  /** The custom relations served: active MANY_TO_ONE fields between objects this model serves, each seen as the link it is. */
  get links(): CustomLink[] {
    return (this.linkList ??= this.fields.flatMap((f) => {
      const link = customRelation(f);
      if (!f.isActive || link?.relationType !== 'MANY_TO_ONE' || !this.has(f.object) || !this.has(link.targetObject)) return [];
      const target = this.declaration(link.targetObject);
      return [
        {
          source: this.declaration(f.object),
          sourceObjectId: this.customObject(f.object)?.id,
          targetTable: target.table,
          targetSingular: target.singular,
          targetObjectId: this.customObject(link.targetObject)?.id,
          field: {
            name: linkKey(f.name),
            column: '',
            target: link.targetObject,
            relation: f.name,
            inverse: link.inverseName,
            docs: { description: f.description ?? f.label },
            fieldId: f.id,
            onDelete: link.onDelete ?? 'SET_NULL',
          },
        },
      ];
    }));
  }
  private linkList?: CustomLink[];

  private declaration(plural: string): ObjectDeclaration {
    const custom = this.customObject(plural);
    return custom ? customObjectDeclaration(custom) : OBJECTS.find((o) => o.plural === plural)!;
  }

  /** Whether anything of this model differs from the standard objects: an active custom field or object. */
  get hasActiveFields(): boolean {
    return this.fields.some((f) => f.isActive) || this.objects.some((o) => o.isActive);
  }

  /** The definition of `plural` with this workspace's fields; 404 for an object it does not serve (a deactivated one included). */
  definition(plural: string): ObjectDefinition {
    let found = this.definitions.get(plural);
    if (!found) {
      const active = this.active(plural);
      const custom = this.customObject(plural);
      if (!custom && !OBJECTS.some((o) => o.plural === plural)) throw new NotFoundError(`No object ${plural} in this workspace`);
      const base = custom ? customObjectDefinition(custom) : definitionFor(plural);
      found = active.length ? withCustomFields(base, active) : base;
      // A relation filter reaches the target's custom fields of this workspace too.
      if (this.hasActiveFields) {
        const relations = relationsOf(plural, (target) => this.definition(target).schema);
        const from = this.links.filter((l) => l.source.plural === plural);
        const to = this.links.filter((l) => l.field.target === plural);
        const schemaOf = (name: string) => this.definition(name).schema;
        const relation = (kind: 'toOne' | 'toMany', fieldId: string, objectId: string | undefined, other: string) => ({
          kind,
          column: '',
          fieldId,
          objectId,
          get target() {
            return schemaOf(other);
          },
        });
        for (const link of from)
          relations[link.field.relation] = relation('toOne', link.field.fieldId, link.targetObjectId, link.field.target);
        for (const link of to)
          relations[link.field.inverse] = relation('toMany', link.field.fieldId, link.sourceObjectId, link.source.plural);
        // GraphQL's selection of a relation reads the id it follows, as a standard relation's reads its column.
        const columnsFor = found.columnsFor;
        const linkNames = new Set(from.map((l) => l.field.relation));
        found = {
          ...found,
          columnsFor: from.length
            ? (selected) => {
                const columns = columnsFor(selected);
                if (!columns.includes('custom') && [...selected].some((name) => linkNames.has(name))) columns.push('custom');
                return columns;
              }
            : columnsFor,
          schema: { ...found.schema, relations },
          relations: [...found.relations, ...from],
          inverses: [...found.inverses, ...to.map((l) => ({ source: l.source, field: l.field, sourceObjectId: l.sourceObjectId }))],
        };
      }
      this.definitions.set(plural, found);
    }
    return found;
  }
}

const EMPTY = new WorkspaceModel('', 0, []);
/** Workspaces whose models are kept; each is a few KB. */
const MAX_WORKSPACES = 2_000;

/**
 * Each workspace's data model, kept per `data_model_version` (docs/data-model.md). The
 * principal carries the version it was read with, and every change moves the version and
 * drops cached principals on every instance, so a change applies to the next request
 * everywhere. A workspace that never had a custom field (version 0) costs no query.
 */
@Injectable()
export class DataModel {
  private readonly models = new LRUCache<string, WorkspaceModel>({ max: MAX_WORKSPACES });

  constructor(private readonly sql: Sql) {}

  async of(principal: Principal): Promise<WorkspaceModel> {
    if (principal.dataModelVersion === 0) return EMPTY;
    const kept = this.models.get(principal.workspaceId);
    if (kept && principal.dataModelVersion !== undefined && kept.version >= principal.dataModelVersion) return kept;
    return this.read(principal.workspaceId);
  }

  async read(workspaceId: string): Promise<WorkspaceModel> {
    const objects = await this.sql.rows<Parameters<typeof toObject>[0]>(
      `SELECT ${OBJECT_COLUMNS} FROM objects WHERE workspace_id = $1 AND is_custom ORDER BY created_at, id`,
      [workspaceId],
      { prepared: true },
    );
    const rows = await this.sql.rows<Record<string, unknown>>(
      `SELECT w.data_model_version AS __version, f.*
         FROM workspaces w LEFT JOIN custom_fields f ON f.workspace_id = $1
        WHERE w.id = $1 ORDER BY f.created_at, f.id`,
      [workspaceId],
      { prepared: true },
    );
    const version = Number(rows[0]?.__version ?? 0);
    const fields = rows.filter((row) => row.id != null).map((row) => toField(row as unknown as Parameters<typeof toField>[0]));
    const model = new WorkspaceModel(workspaceId, version, fields, objects.map(toObject));
    this.models.set(workspaceId, model);
    return model;
  }
}

/** An object's definition with a workspace's active custom fields: read, written, filtered and sorted like built-in ones. */
function withCustomFields(base: ObjectDefinition, fields: CustomField[]): ObjectDefinition {
  const leaves = fields.flatMap(customQueryFields);
  const compositeSort: Record<string, string[]> = { ...base.schema.compositeSort };
  for (const field of fields) {
    const sort = customCompositeSort(field);
    if (sort) compositeSort[field.name] = sort;
  }
  const names = new Set(fields.map((f) => f.name));
  return {
    ...base,
    custom: fields,
    schema: { ...base.schema, fields: { ...base.schema.fields, ...Object.fromEntries(leaves.map((l) => [l.path, l])) }, compositeSort },
    columns: [...base.columns, 'custom'],
    columnsFor: (selected) => {
      const columns = base.columnsFor(selected);
      if ([...selected].some((name) => names.has(name))) columns.push('custom');
      return columns;
    },
    toRecord: (row) => {
      const record: AnyRecord = base.toRecord(row);
      const stored = row.custom as Record<string, unknown> | undefined;
      if (stored === undefined) return record; // not read (GraphQL selected no custom field)
      for (const field of fields) {
        const value = ownValue(stored, field.name);
        record[field.name] = value === undefined || value === null ? absentValue(field.type) : fullComposite(field.type, value);
      }
      return record;
    },
  };
}
