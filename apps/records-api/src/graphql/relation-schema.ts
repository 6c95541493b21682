import type { GraphQLFieldConfig, GraphQLResolveInfo } from 'graphql';
import { OBJECTS } from '#records/objects/index.js';
import { EMBEDDED_PER_RECORD } from '#records/service/constants.js';
import type { CustomLink, WorkspaceModel } from '#records/service/data-model.js';
import type { AnyRecord } from '#records/service/object-definitions.js';
import { customObjectTypes } from './custom-object-schema.js';
import type { GraphqlContext } from './graphql-context.js';
import type { GraphqlListInput } from './list-args.js';
import { PAGE_ARG_DOCS } from './object-docs.js';
import { connectionCost, singleRecordCost } from './query-limits.js';
import { inverseConnection, linkedRecord } from './record-resolvers.js';
import type { FieldEdit } from './schema-copy.js';

/*
 * A workspace's custom relations in its GraphQL schema (docs/graphql.md "Relations";
 * docs/decisions/0066-relations.md), as the standard relations are typed: the linked record
 * on the source type (`Ticket.company: Company`), the inverse connection on the target
 * (`Company.tickets(first, after, last, before, filter, orderBy): TicketConnection!`), and
 * one hop in each filter input. Their resolvers are the standard relations' (record-resolvers.ts),
 * batched per relation and request, attached by type and field name, so identical models share a schema.
 */

const doc = (text: string) => `${JSON.stringify(text)} `;

/** The GraphQL type name of each object a workspace's schema serves, by plural name. */
function typeNames(model: WorkspaceModel): Map<string, string> {
  const names = new Map(OBJECTS.map((o) => [o.plural, o.typeName]));
  for (const [typeName, plural] of customObjectTypes(model)) names.set(plural, typeName);
  return names;
}

/** The relations the schema types: both ends served by GraphQL. */
function typedLinks(model: WorkspaceModel): { link: CustomLink; source: string; target: string }[] {
  const names = typeNames(model);
  return model.links.flatMap((link) => {
    const [source, target] = [names.get(link.source.plural), names.get(link.field.target)];
    return source && target ? [{ link, source, target }] : [];
  });
}

/** The SDL that types a workspace's custom relations (extensions of types the schema has by then). */
export function relationsSdl(model: WorkspaceModel): string[] {
  const page = (['first', 'after', 'last', 'before'] as const)
    .map((name) => `${doc(PAGE_ARG_DOCS[name])}${name}: ${name === 'first' || name === 'last' ? 'Int' : 'String'}`)
    .join(' ');
  return typedLinks(model).flatMap(({ link, source, target }) => {
    const { relation, inverse, docs } = link.field;
    const plural = link.source.plural;
    return [
      `extend type ${source} { ${doc(docs?.description ?? relation)}${relation}: ${target} }`,
      `extend type ${target} { ${doc(
        `The ${EMBEDDED_PER_RECORD} oldest ${plural} linking to it through ${relation}; with list arguments, a page of them.`,
      )}${inverse}(${page} filter: ${source}FilterInput orderBy: [${source}OrderByInput!]): ${source}Connection! }`,
      `extend input ${source}FilterInput { ${relation}: ${target}FilterInput }`,
      `extend input ${target}FilterInput { ${inverse}: ${source}FilterInput }`,
    ];
  });
}

/** The resolvers and costs of the fields relationsSdl added (passed to copySchema with the objects' own). */
export function relationResolvers(model: WorkspaceModel): FieldEdit {
  const byField = new Map<string, Pick<GraphQLFieldConfig<unknown, unknown>, 'resolve' | 'extensions'>>();
  for (const { link, source, target } of typedLinks(model)) {
    const { name, relation, inverse } = link.field;
    byField.set(`${source}.${relation}`, {
      extensions: { complexity: singleRecordCost },
      resolve: (record, _args, context) => linkedRecord(link.field.target, (record as AnyRecord)[name], context as GraphqlContext),
    });
    byField.set(`${target}.${inverse}`, {
      extensions: { complexity: connectionCost },
      resolve: (record, args, context, info) =>
        inverseConnection(
          link.source.plural,
          { fieldId: link.field.fieldId },
          record as AnyRecord,
          args as GraphqlListInput,
          context as GraphqlContext,
          info as GraphQLResolveInfo,
        ),
    });
  }
  return (typeName, fieldName, field) => {
    const found = byField.get(`${typeName}.${fieldName}`);
    return found ? { ...field, resolve: found.resolve, extensions: { ...field.extensions, ...found.extensions } } : field;
  };
}
