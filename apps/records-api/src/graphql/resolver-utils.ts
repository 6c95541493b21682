import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/** The fields of these selection sets, through fragments too. */
function fieldsOf(info: GraphQLResolveInfo, sets: (SelectionSetNode | undefined)[]): FieldNode[] {
  const fields: FieldNode[] = [];
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode | undefined) => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) walk(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        walk(info.fragments[selection.name.value]?.selectionSet);
      }
    }
  };
  sets.forEach(walk);
  return fields;
}

/** Names of the fields selected directly on the resolved field, through fragments too. */
export function selectedFields(info: GraphQLResolveInfo): Set<string> {
  return selectedFieldsAt(info, []);
}

/**
 * Names of the fields selected at `path` below the resolved field — `['edges', 'node']`:
 * the record fields a connection's operation reads (aliases and fragments included).
 */
export function selectedFieldsAt(info: GraphQLResolveInfo, path: string[]): Set<string> {
  let fields = fieldsOf(
    info,
    info.fieldNodes.map((node) => node.selectionSet),
  );
  for (const name of path) {
    fields = fieldsOf(
      info,
      fields.filter((field) => field.name.value === name).map((field) => field.selectionSet),
    );
  }
  return new Set(fields.map((field) => field.name.value));
}

/** Only `id` selected (a deleted record need not be read back). */
export function onlyId(info: GraphQLResolveInfo): boolean {
  return [...selectedFields(info)].every((name) => name === 'id' || name === '__typename');
}

/** GraphQL input objects (null-prototype) as the plain JSON the service layer validates. */
export function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}
