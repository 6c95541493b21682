import type { FieldDef, ObjectSchema, SchemaRelation } from '../query/types.js';
import { composite } from './composites.js';
import type { ObjectDeclaration } from './declaration.js';
import { OBJECTS } from './index.js';

/** The list parameters' view of an object (filterable and sortable leaves by dotted path). */
export function querySchemaOf(object: ObjectDeclaration): ObjectSchema {
  const fields: FieldDef[] = [{ path: 'id', column: 'id', type: 'uuid', nullable: false, sortable: true }];
  const compositeSort: Record<string, string[]> = {};
  for (const field of object.fields) {
    switch (field.kind) {
      case 'text':
        fields.push({ path: field.name, column: field.column, type: 'text', nullable: !field.required, sortable: true });
        break;
      case 'enum':
        fields.push({ path: field.name, column: field.column, type: 'enum', nullable: false, sortable: true, values: field.values });
        break;
      case 'timestamp':
        fields.push({ path: field.name, column: field.column, type: 'timestamp', nullable: true, sortable: true });
        break;
      case 'relation':
        fields.push({ path: field.name, column: field.column, type: 'uuid', nullable: true, sortable: true });
        break;
      case 'composite': {
        const type = composite(field.type);
        for (const sub of type.subFields) {
          if (!sub.filterable) continue;
          const path = `${field.name}.${sub.name}`;
          const column = field.columns[sub.name];
          if (sub.kind === 'textList') fields.push({ path, column, type: 'textArray', nullable: false, sortable: false });
          else
            fields.push({
              path,
              column,
              type: sub.kind === 'bigint' ? 'bigint' : sub.kind === 'number' ? 'number' : 'text',
              nullable: true,
              sortable: sub.sortable,
            });
        }
        compositeSort[field.name] = type.sortBy.map((sub) => `${field.name}.${sub}`);
        break;
      }
    }
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
    if (field.kind !== 'relation') continue;
    const target = field.target;
    relations[field.relation] = {
      kind: 'toOne',
      column: field.column,
      get target() {
        return schemaOf(target);
      },
    };
  }
  for (const source of OBJECTS) {
    for (const field of source.fields) {
      if (field.kind !== 'relation' || field.target !== plural) continue;
      relations[field.inverse] = {
        kind: 'toMany',
        column: field.column,
        get target() {
          return schemaOf(source.plural);
        },
      };
    }
  }
  return relations;
}
