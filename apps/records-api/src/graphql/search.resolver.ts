import type { Type } from '@nestjs/common';
import { Args, Field, Float, Int, ObjectType, Query, Resolver, createUnionType, registerEnumType } from '@nestjs/graphql';
import { CurrentPrincipal } from '#auth/auth.guard.js';
import type { Principal } from '#auth/principal.js';
import { OBJECTS } from '#records/objects/index.js';
import { GRAPHQL_TYPES } from './graphql-types.js';
import { connectionCost } from './query-limits.js';
import { PageInfo } from './types/common.types.js';
import { UUIDScalar } from './types/scalars.js';
import type { AnyRecord } from '#records/service/object-definitions.js';
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SEARCHABLE_OBJECTS, SearchService } from '#records/service/search.service.js';

/** The searchable objects by their plural names, as REST's `objects` and each result's `object` name them. */
export const SearchableObject = Object.fromEntries(OBJECTS.map((o) => [o.plural, o.plural]));
registerEnumType(SearchableObject, { name: 'SearchableObject', description: 'An object search reads (docs/graphql.md).' });

const TYPE_BY_OBJECT = new Map(OBJECTS.map((o) => [o.plural, GRAPHQL_TYPES.get(o.plural)!.object]));

export const SearchRecord = createUnionType({
  name: 'SearchRecord',
  description: 'The record a search result stands for.',
  types: () => OBJECTS.map((o) => GRAPHQL_TYPES.get(o.plural)!.object) as unknown as readonly Type<unknown>[],
  resolveType: (value: AnyRecord & { __object?: string }) => TYPE_BY_OBJECT.get(value.__object ?? ''),
}) as object;

@ObjectType('SearchResult')
export class SearchResultNode {
  @Field(() => SearchableObject)
  object: string;

  @Field(() => UUIDScalar)
  id: string;

  @Field({ description: "The record's name (a person's full name, else their e-mail)." })
  label: string;

  @Field(() => Float, { description: '3 + rank: every word exact; 2 + rank: by prefix; 1.5 or 1: with a typo. Higher is better.' })
  score: number;

  @Field(() => SearchRecord)
  record: object;
}

@ObjectType('SearchResultEdge')
export class SearchResultEdge {
  @Field(() => SearchResultNode)
  node: SearchResultNode;

  @Field()
  cursor: string;
}

@ObjectType('SearchResultConnection')
export class SearchResultConnection {
  @Field(() => [SearchResultEdge])
  edges: SearchResultEdge[];

  @Field(() => PageInfo)
  pageInfo: PageInfo;
}

/** `search(q, objects, first, after)` (docs/graphql.md): one call into SearchService. */
@Resolver(() => SearchResultConnection)
export class SearchResolver {
  constructor(private readonly search: SearchService) {}

  @Query(() => SearchResultConnection, {
    name: 'search',
    complexity: connectionCost,
    description:
      'Search across objects: every word of q by prefix, in any case, with or without accents, and one typo in words of 4+ letters. Best first.',
  })
  async run(
    @CurrentPrincipal() principal: Principal,
    @Args('q', { type: () => String }) q: string,
    @Args('objects', { type: () => [SearchableObject], nullable: true }) objects: string[] | null,
    @Args('first', { type: () => Int, nullable: true, description: `1 to ${MAX_SEARCH_LIMIT}; default ${DEFAULT_SEARCH_LIMIT}.` })
    first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
  ): Promise<SearchResultConnection> {
    const result = await this.search.search(principal, {
      q,
      objects: objects ?? undefined,
      // The result union holds the standard objects' types only (docs/decisions/0060-custom-objects-data-surfaces.md).
      within: SEARCHABLE_OBJECTS,
      limit: first ?? undefined,
      after: after ?? undefined,
      afterParam: 'after',
    });
    return {
      edges: result.hits.map(({ cursor, record, ...hit }) => ({
        cursor,
        // resolveType reads the object back from the record (a copy: the record stays as the service gave it).
        node: { ...hit, record: Object.defineProperty({ ...record }, '__object', { value: hit.object, enumerable: false }) },
      })),
      pageInfo: result.pageInfo,
    };
  }
}
