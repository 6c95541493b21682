import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/** Names of the fields selected directly on the resolved field, through fragments too. */
export function selectedFields(info: GraphQLResolveInfo): Set<string> {
  const names = new Set<string>();
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode | undefined) => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) names.add(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) walk(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        walk(info.fragments[selection.name.value]?.selectionSet);
      }
    }
  };
  for (const node of info.fieldNodes) walk(node.selectionSet);
  return names;
}

/** Only `id` selected (a deleted record need not be read back). */
export function onlyId(info: GraphQLResolveInfo): boolean {
  return [...selectedFields(info)].every((name) => name === 'id' || name === '__typename');
}

/** GraphQL input objects (null-prototype) as the plain JSON the service layer validates. */
export function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}
