import { Injectable, type Type } from '@nestjs/common';
import type { Principal } from '#auth/principal.js';
import { OBJECTS } from '../objects/index.js';
import type { FilterNode, ObjectSchema } from '../query/types.js';
import type { ListArgs, ListResult } from './records.service.js';
import type { AnyRecord } from './object-definitions.js';
import type { AggregateGroup, GroupByArgs } from './group-by.js';
import { RecordsService, type ChangedByFilter, type UnconfirmedCreate, type UpsertResult } from './records.service.js';

/**
 * A handle on RecordsService with one object fixed, not a layer of its own: each method is
 * the service's, with the object's plural name filled in. One provider class per object
 * (made here, so `app.get(CompaniesService)` finds the one REST, GraphQL and MCP call).
 */
export class ObjectService {
  constructor(
    readonly records: RecordsService,
    readonly object: string,
  ) {}

  /** The list parameters' view of the object as `principal`'s workspace sees it (custom fields included). */
  async schema(principal: Principal): Promise<ObjectSchema> {
    return (await this.records.definitionFor(this.object, principal)).schema;
  }

  list(principal: Principal, args: ListArgs, depth: 0 | 1 = 0): Promise<ListResult<AnyRecord>> {
    return this.records.list(this.object, principal, args, depth);
  }

  get(principal: Principal, id: string, depth: 0 | 1 = 0, fields?: ReadonlySet<string>): Promise<AnyRecord> {
    return this.records.get(this.object, principal, id, depth, fields);
  }

  /** Groups and aggregates (docs/rest.md "Aggregates"); `parse` reads the arguments against the workspace's schema. */
  groupBy(principal: Principal, parse: (schema: ObjectSchema) => GroupByArgs): Promise<AggregateGroup[]> {
    return this.records.groupBy(this.object, principal, parse);
  }

  /** The names REST's `fields=` takes (docs/rest.md). */
  fieldNames(principal: Principal): Promise<{ own: string[]; embedded: string[] }> {
    return this.records.fieldNames(this.object, principal);
  }

  create(principal: Principal, body: unknown, unconfirmed?: UnconfirmedCreate): Promise<AnyRecord> {
    return this.records.create(this.object, principal, body, unconfirmed);
  }

  createMany(principal: Principal, bodies: unknown, listName = ''): Promise<AnyRecord[]> {
    return this.records.createMany(this.object, principal, bodies, listName);
  }

  /** `listName` null: one record (a single create's body). */
  upsertMany(principal: Principal, bodies: unknown, listName: string | null = '', match?: string): Promise<UpsertResult> {
    return this.records.upsertMany(this.object, principal, bodies, listName, match);
  }

  update(principal: Principal, id: string, body: unknown): Promise<AnyRecord> {
    return this.records.update(this.object, principal, id, body);
  }

  updateByFilter(principal: Principal, filter: FilterNode | undefined, body: unknown): Promise<ChangedByFilter> {
    return this.records.updateByFilter(this.object, principal, filter, body);
  }

  deleteByFilter(principal: Principal, filter: FilterNode | undefined): Promise<ChangedByFilter> {
    return this.records.deleteByFilter(this.object, principal, filter);
  }

  restore(principal: Principal, id: string): Promise<AnyRecord> {
    return this.records.restore(this.object, principal, id);
  }

  destroy(principal: Principal, id: string): Promise<{ id: string }> {
    return this.records.destroy(this.object, principal, id);
  }

  delete(principal: Principal, id: string): Promise<{ id: string }> {
    return this.records.delete(this.object, principal, id);
  }
}

const classes = new Map<string, Type<ObjectService>>();

/** The provider class of an object's service (`CompaniesService`, `OpportunitiesService`, …). */
export function serviceFor(plural: string): Type<ObjectService> {
  let cls = classes.get(plural);
  if (!cls) {
    const object = OBJECTS.find((o) => o.plural === plural);
    if (!object) throw new Error(`no record object ${plural}`);
    const name = `${object.pluralType}Service`;
    cls = {
      [name]: class extends ObjectService {
        constructor(records: RecordsService) {
          super(records, plural);
        }
      },
    }[name];
    Reflect.defineMetadata('design:paramtypes', [RecordsService], cls);
    Injectable()(cls);
    classes.set(plural, cls);
  }
  return cls;
}

export const OBJECT_SERVICES = OBJECTS.map((o) => serviceFor(o.plural));

/** Every object's service, in the order of OBJECTS (MCP tools, docs). */
@Injectable()
export class ObjectServices {
  readonly all: ObjectService[];

  constructor(...services: ObjectService[]) {
    this.all = services;
  }
}

export const OBJECT_SERVICES_PROVIDER = {
  provide: ObjectServices,
  useFactory: (...services: ObjectService[]) => new ObjectServices(...services),
  inject: OBJECT_SERVICES,
};
