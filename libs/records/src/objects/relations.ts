import { columnOf, relationSettings, type OnDelete } from '../field-types/index.js';
import type { FieldDocs, ObjectDeclaration, StandardField } from './declaration.js';
import { OBJECTS } from './index.js';

/**
 * A RELATION field seen as the link it is (its settings, field-types/relation.ts): the id
 * field and its column, the target's plural name, the embedded record's name and the
 * inverse list's on the target.
 */
export interface RelationField {
  /** The id field, e.g. `companyId`. */
  name: string;
  column: string;
  /** Plural name of the target object. */
  target: string;
  /** The embedded record at depth=1 and in GraphQL, e.g. `company`. */
  relation: string;
  /** The list on the target, e.g. Company `people`; a GraphQL field of the target. */
  inverse: string;
  docs?: FieldDocs & { relation?: string; inverse?: string };
  /**
   * A custom relation (docs/decisions/0066-relations.md): its MANY_TO_ONE field's id, whose
   * links `record_links` holds; the id is in `custom` under `name`, and `column` is unused.
   */
  fieldId?: string;
  onDelete?: OnDelete;
}

function linkOf(field: StandardField): RelationField | undefined {
  const link = relationSettings(field);
  if (!link) return undefined;
  return {
    name: field.name,
    column: columnOf(field),
    target: link.targetObject,
    relation: link.relationName,
    inverse: link.inverseName,
    docs: field.docs,
  };
}

const byObject = new WeakMap<ObjectDeclaration<StandardField>, RelationField[]>();

/** The object's links to other objects (its RELATION fields), in declaration order. */
export function relationFields(object: ObjectDeclaration<StandardField>): RelationField[] {
  let found = byObject.get(object);
  if (!found) byObject.set(object, (found = object.fields.flatMap((f) => linkOf(f) ?? [])));
  return found;
}

/** A relation seen from its target: `people.companyId` seen from companies is the inverse `people`. */
export interface InverseRelation {
  source: ObjectDeclaration;
  field: RelationField;
  /** A custom source object's id (its records' scope). */
  sourceObjectId?: string;
}

/** The relations that link to `plural`'s records, from their source objects. */
export function inversesOf(plural: string): InverseRelation[] {
  return OBJECTS.flatMap((source) => relationFields(source).flatMap((field) => (field.target === plural ? [{ source, field }] : [])));
}
