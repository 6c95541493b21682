import { Injectable } from '@nestjs/common';
import { assertCan, type Principal } from '#auth/principal.js';
import { OBJECTS, type ObjectDeclaration, type RelationField } from '#records/objects/index.js';
import { RecordStore, type ListArgs, type ListResult } from '../records/record-store.js';
import { EMBEDDED_PER_RECORD } from './constants.js';
import { definitionFor, type AnyRecord, type ObjectDefinition } from './object-definitions.js';

/** A relation seen from its target: `people.companyId` seen from companies is the inverse `people`. */
export interface InverseRelation {
  source: ObjectDeclaration;
  field: RelationField;
}

export function inversesOf(plural: string): InverseRelation[] {
  return OBJECTS.flatMap((source) =>
    source.fields.filter((f): f is RelationField => f.kind === 'relation' && f.target === plural).map((field) => ({ source, field })),
  );
}

/**
 * The service layer of every record object (one instance, any object): the store's
 * permissions, validation and paging, plus the relations `depth=1` embeds. REST, GraphQL
 * and MCP call it with the object's plural name.
 */
@Injectable()
export class RecordsService {
  constructor(private readonly store: RecordStore) {}

  definition(plural: string): ObjectDefinition {
    return definitionFor(plural);
  }

  async list(plural: string, principal: Principal, args: ListArgs, depth: 0 | 1 = 0): Promise<ListResult<AnyRecord>> {
    const result = await this.store.list(definitionFor(plural), principal, args);
    return depth === 0 ? result : { ...result, records: await this.embed(plural, principal, result.records) };
  }

  async get(plural: string, principal: Principal, id: string, depth: 0 | 1 = 0): Promise<AnyRecord> {
    const record = await this.store.get(definitionFor(plural), principal, id);
    return depth === 0 ? record : (await this.embed(plural, principal, [record]))[0];
  }

  create(plural: string, principal: Principal, body: unknown): Promise<AnyRecord> {
    return this.store.create(definitionFor(plural), principal, body);
  }

  createMany(plural: string, principal: Principal, bodies: unknown, listName = ''): Promise<AnyRecord[]> {
    return this.store.createMany(definitionFor(plural), principal, bodies, listName);
  }

  update(plural: string, principal: Principal, id: string, body: unknown): Promise<AnyRecord> {
    return this.store.update(definitionFor(plural), principal, id, body);
  }

  delete(plural: string, principal: Principal, id: string): Promise<{ id: string }> {
    return this.store.softDelete(definitionFor(plural), principal, id);
  }

  /** Live records of `target` by id, in one query (needs read on the target). */
  byIds(target: string, principal: Principal, ids: string[]): Promise<AnyRecord[]> {
    assertCan(principal, target, 'read');
    return this.store.findByIds(definitionFor(target), principal.workspaceId, ids);
  }

  /** Up to 60 live `source` records per parent id through `column`, oldest first, in one query. */
  children(source: string, column: string, principal: Principal, parentIds: string[]) {
    assertCan(principal, source, 'read');
    return this.store.findByParent(definitionFor(source), principal.workspaceId, column, parentIds, EMBEDDED_PER_RECORD);
  }

  /** A page of `source` records per parent id through `column` (nested connection arguments), in one statement. */
  pagesByParent(source: string, column: string, principal: Principal, parentIds: string[], args: ListArgs) {
    return this.store.listByParents(definitionFor(source), principal, column, parentIds, args);
  }

  /** depth=1 (docs/rest.md; docs/architecture.md): each linked record, and the inverse lists declared for depth 1. */
  private async embed(plural: string, principal: Principal, records: AnyRecord[]): Promise<AnyRecord[]> {
    const extras = records.map(() => ({}) as Record<string, unknown>);
    for (const field of definitionFor(plural).relations.map((r) => r.field)) {
      const ids = [...new Set(records.map((r) => r[field.name]).filter((id): id is string => Boolean(id)))];
      const found = new Map((await this.byIds(field.target, principal, ids)).map((t) => [t.id, t]));
      records.forEach((r, i) => (extras[i][field.relation] = r[field.name] ? (found.get(r[field.name]) ?? null) : null));
    }
    for (const { source, field } of inversesOf(plural).filter((inv) => inv.field.inverseAtDepth1)) {
      const lists = await this.children(
        source.plural,
        field.column,
        principal,
        records.map((r) => r.id),
      );
      records.forEach((r, i) => (extras[i][field.inverse] = lists.get(r.id)?.records ?? []));
    }
    return records.map((r, i) => ({ ...r, ...extras[i] }));
  }
}
