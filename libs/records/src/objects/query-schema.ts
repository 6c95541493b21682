import type { FieldDef, ObjectSchema, SchemaRelation } from '../query/types.js';
import { columnOf, fieldType, relationSettings } from '../field-types/index.js';
import type { ObjectDeclaration, StandardField } from './declaration.js';
import { OBJECTS } from './index.js';

/** The list parameters' view of an object (filterable and sortable leaves by dotted path), each field's leaves as its type gives them. */
export function querySchemaOf(object: ObjectDeclaration<StandardField>): ObjectSchema {
  const fields: FieldDef[] = [{ path: 'id', column: 'id', type: 'uuid', nullable: false, sortable: true }];
  const compositeSort: Record<string, string[]> = {};
  for (const field of object.fields) {
    const type = fieldType(field.type);
    fields.push(...type.columnLeaves(field));
    if (type.sortBy) compositeSort[field.name] = type.sortBy.map((sub) => `${field.name}.${sub}`);
  }
  for (const [name, column] of [
    ['createdAt', 'created_at'],
    ['updatedAt', 'updated_at'],
    ['deletedAt', 'deleted_at'],
  ]) {
    fields.push({ path: name, column, type: 'timestamp', nullable: name === 'deletedAt', sortable: true });
  }
  return { name: object.plural, table: object.table, fields: Object.fromEntries(fields.map((f) => [f.path, f])), compositeSort };
}

/**
 * The relations a filter of `plural` may cross (docs/rest.md, "Relation filters"): its own
 * links by their relation name (person `company`) and the links to it by their inverse name
 * (company `people`, `opportunities`). `schemaOf` gives each target's schema as the caller's
 * workspace sees it; it is read when a filter names the relation, not before.
 */
export function relationsOf(plural: string, schemaOf: (plural: string) => ObjectSchema): Record<string, SchemaRelation> {
  const relations: Record<string, SchemaRelation> = {};
  const object = OBJECTS.find((o) => o.plural === plural);
  for (const field of object?.fields ?? []) {
    const link = relationSettings(field);
    if (!link) continue;
    const target = link.targetObject;
    relations[link.relationName] = {
      kind: 'toOne',
      column: columnOf(field),
      get target() {
        return schemaOf(target);
      },
    };
  }
  for (const source of OBJECTS) {
    for (const field of source.fields) {
      const link = relationSettings(field);
      if (link?.targetObject !== plural) continue;
      relations[link.inverseName] = {
        kind: 'toMany',
        column: columnOf(field),
        get target() {
          return schemaOf(source.plural);
        },
      };
    }
  }
  return relations;
}
