import { BadInputError, ErrorCode } from '#errors/errors.js';
import { ON_DELETE, relationSettings, type OnDelete, type RelationSettings } from '../field-types/index.js';
import { isPlain } from '../field-types/shared.js';
import { CUSTOM_FIELD_TYPES, NAME_RULE, RESERVED_NAMES, type CustomField, type NewField } from './custom-fields.js';

/*
 * Relations between any two objects of a workspace (docs/data-model.md "Relations";
 * docs/decisions/0066-relations.md): a relation is two RELATION fields made together, its
 * MANY_TO_ONE side on the source object (`company`, whose records hold the target's id
 * under `companyId` in `custom`) and its ONE_TO_MANY inverse on the target (`tickets`,
 * holding no value). This file holds the rules of their definitions and how the records
 * layer sees them.
 */

/** Relation fields (either side) one object may have. */
export const MAX_RELATIONS = 50;
/** The relation types a request may ask for; MANY_TO_ONE makes its ONE_TO_MANY inverse. */
const REQUEST_TYPES = ['MANY_TO_ONE'];
const MAX_LABEL = 100;
const RELATION_KEYS = ['type', 'targetObject', 'inverseName', 'inverseLabel', 'onDelete'];
const FIELD_KEYS = ['object', 'name', 'label', 'description', 'type', 'relation', 'isActive', 'isNullable'];

/** The key a MANY_TO_ONE field's value has in records and in `custom`: `company` → `companyId`. */
export const linkKey = (name: string) => `${name}Id`;

/** A field's relation settings when it is a custom relation's side, else null. */
export function customRelation(field: Pick<CustomField, 'type' | 'settings'>): RelationSettings | null {
  const settings = relationSettings(field);
  return settings?.inverseFieldId ? settings : null;
}

/** What the metadata API shows of a relation field (docs/data-model.md "Relations"). */
export interface RelationSummary {
  type: RelationSettings['relationType'];
  targetObject: string;
  inverseFieldId: string;
  inverseName: string;
  onDelete: OnDelete;
}

export function relationSummary(field: Pick<CustomField, 'type' | 'settings'>): RelationSummary | undefined {
  const link = customRelation(field);
  if (!link) return undefined;
  return {
    type: link.relationType,
    targetObject: link.targetObject,
    inverseFieldId: link.inverseFieldId!,
    inverseName: link.inverseName,
    onDelete: link.onDelete ?? 'SET_NULL',
  };
}

/**
 * A field as the records layer sees it (a value of a record): a MANY_TO_ONE relation is its
 * id under `<name>Id`; a ONE_TO_MANY inverse holds no value (undefined).
 */
export function valueField(field: CustomField): CustomField | undefined {
  const link = customRelation(field);
  if (!link) return field;
  return link.relationType === 'MANY_TO_ONE' ? { ...field, name: linkKey(field.name) } : undefined;
}

/** The names a field takes on its object: its own, and for a MANY_TO_ONE relation the key of its id too. */
export function namesTaken(field: Pick<CustomField, 'name' | 'type' | 'settings'>): string[] {
  return customRelation(field)?.relationType === 'MANY_TO_ONE' ? [field.name, linkKey(field.name)] : [field.name];
}

/** The two fields of a new relation, checked: `source` holds the link, `inverse` lists it on the target. */
export interface NewRelation {
  source: NewField;
  inverse: NewField;
}

export interface RelationContext {
  /** The active objects of the workspace (plural names, standard ones included). */
  active: readonly string[];
  /** Every object's plural name (inactive ones too), for messages. */
  objects: readonly string[];
  /** Names a field of `object` may not take: reserved, built-in, and every existing field's (namesTaken). */
  taken(object: string): Set<string>;
  /** How many relation fields `object` has. */
  relations(object: string): number;
}

function bad(...messages: string[]): BadInputError {
  return new BadInputError(ErrorCode.VALIDATION_FAILED, ...messages);
}

function label(value: unknown, fallback: string, path: string, problems: string[]): string {
  const text = value ?? fallback;
  if (typeof text !== 'string' || !text.trim() || text.length > MAX_LABEL || text.includes('\u0000')) {
    problems.push(`${path} must be a non-empty string of at most ${MAX_LABEL} characters`);
    return fallback;
  }
  return text;
}

const nameRule = (path: string, example: string) =>
  `${path} must be camelCase: a lower-case letter, then letters and digits, at most 63 characters (${NAME_RULE.source}), as in "${example}"`;

/**
 * A RELATION field's definition checked (docs/data-model.md "Relations"): both objects
 * active, both names camelCase and free on their objects (a MANY_TO_ONE side takes
 * `<name>Id` too), the relation type, `onDelete`, and at most MAX_RELATIONS relation fields
 * on each object.
 */
export function checkNewRelation(body: unknown, context: RelationContext): NewRelation {
  if (!isPlain(body)) throw bad('body must be a JSON object');
  const problems: string[] = [];
  for (const key of Object.keys(body)) if (!FIELD_KEYS.includes(key)) problems.push(`${key}: a RELATION field does not take it`);
  if (body.isNullable !== undefined && body.isNullable !== true) problems.push('isNullable: a relation may always be empty (true)');
  const object = body.object;
  if (typeof object !== 'string' || !context.active.includes(object)) problems.push(`object must be one of ${context.active.join(', ')}`);
  const relation = body.relation;
  if (!isPlain(relation)) {
    problems.push(
      `type must be one of ${CUSTOM_FIELD_TYPES.join(', ')}, or RELATION with relation: {type, targetObject, inverseName, inverseLabel, onDelete?}`,
    );
    throw bad(...problems);
  }
  for (const key of Object.keys(relation)) if (!RELATION_KEYS.includes(key)) problems.push(`relation.${key} is not a known field`);
  if (relation.type === 'MANY_TO_MANY')
    problems.push('relation.type: MANY_TO_MANY is not offered yet; make the junction object and two MANY_TO_ONE relations');
  else if (typeof relation.type !== 'string' || !REQUEST_TYPES.includes(relation.type))
    problems.push(`relation.type must be one of ${REQUEST_TYPES.join(', ')}`);
  const target = relation.targetObject;
  if (typeof target !== 'string' || !context.active.includes(target)) {
    const inactive = typeof target === 'string' && context.objects.includes(target);
    problems.push(
      inactive
        ? `relation.targetObject: ${target} is inactive; activate it first`
        : `relation.targetObject must be one of ${context.active.join(', ')}`,
    );
  }
  const onDelete = relation.onDelete ?? 'SET_NULL';
  if (typeof onDelete !== 'string' || !(ON_DELETE as readonly string[]).includes(onDelete))
    problems.push(`relation.onDelete must be one of ${ON_DELETE.join(', ')}`);
  const name = body.name;
  const inverseName = relation.inverseName;
  if (typeof name !== 'string' || !NAME_RULE.test(name)) problems.push(nameRule('name', 'company'));
  if (typeof inverseName !== 'string' || !NAME_RULE.test(inverseName)) problems.push(nameRule('relation.inverseName', 'tickets'));
  const isActive = body.isActive ?? true;
  if (typeof isActive !== 'boolean') problems.push('isActive must be true or false');
  if (problems.length) throw bad(...problems);
  const [source, targetObject] = [object as string, target as string];
  const [own, inverse] = [name as string, inverseName as string];
  const sourceTaken = context.taken(source);
  for (const taken of [own, linkKey(own)]) {
    if (RESERVED_NAMES.has(taken) || sourceTaken.has(taken))
      problems.push(`name: "${taken}" is already a field of ${source}; choose another`);
  }
  const targetTaken = context.taken(targetObject);
  if (RESERVED_NAMES.has(inverse) || targetTaken.has(inverse) || (source === targetObject && [own, linkKey(own)].includes(inverse))) {
    problems.push(`relation.inverseName: "${inverse}" is already a field of ${targetObject}; choose another`);
  }
  const added = (plural: string) => (plural === source ? 1 : 0) + (plural === targetObject ? 1 : 0);
  for (const plural of new Set([source, targetObject])) {
    if (context.relations(plural) + added(plural) > MAX_RELATIONS) {
      problems.push(`${plural} already has ${context.relations(plural)} relation fields; an object has at most ${MAX_RELATIONS}`);
    }
  }
  const sourceLabel = label(body.label, own, 'label', problems);
  const inverseLabel = label(relation.inverseLabel, inverse, 'relation.inverseLabel', problems);
  const description = body.description ?? null;
  if (description !== null && (typeof description !== 'string' || description.length > 500))
    problems.push('description must be a string of at most 500 characters, or null');
  if (problems.length) throw bad(...problems);
  const field = (objectName: string, fieldName: string, fieldLabel: string, settings: RelationSettings): NewField => ({
    object: objectName,
    name: fieldName,
    label: fieldLabel,
    description: objectName === source && fieldName === own ? (description as string | null) : null,
    type: 'RELATION',
    isNullable: true,
    defaultValue: null,
    isUnique: false,
    options: null,
    settings,
    isActive: isActive as boolean,
  });
  const common = { onDelete: onDelete as OnDelete };
  return {
    source: field(source, own, sourceLabel, {
      relationType: 'MANY_TO_ONE',
      targetObject,
      relationName: own,
      inverseName: inverse,
      ...common,
    }),
    inverse: field(targetObject, inverse, inverseLabel, {
      relationType: 'ONE_TO_MANY',
      targetObject: source,
      relationName: inverse,
      inverseName: own,
      ...common,
    }),
  };
}
