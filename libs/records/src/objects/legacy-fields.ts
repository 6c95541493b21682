import { relationSettings } from '../field-types/index.js';
import type { StandardField } from './declaration.js';

/*
 * Transitional: the field shapes the surfaces read before the standard fields became
 * registry metadata, derived from the metadata, until every surface asks the registry.
 */

export interface TextField extends StandardField {
  kind: 'text';
  column: string;
  required?: boolean;
  maxLength: number;
}

export interface EnumField extends StandardField {
  kind: 'enum';
  column: string;
  enumName: string;
  values: readonly string[];
  default: string;
}

export interface TimestampField extends StandardField {
  kind: 'timestamp';
  column: string;
}

export interface LegacyRelationField extends StandardField {
  kind: 'relation';
  column: string;
  target: string;
  relation: string;
  inverse: string;
}

export interface CompositeField extends StandardField {
  kind: 'composite';
  columns: Record<string, string>;
}

export type FieldDeclaration = TextField | EnumField | TimestampField | LegacyRelationField | CompositeField;

const cap = (name: string) => name[0].toUpperCase() + name.slice(1);

export function withLegacy(typeName: string, field: StandardField): FieldDeclaration {
  const link = relationSettings(field);
  if (link)
    return {
      ...field,
      kind: 'relation',
      column: field.column!,
      target: link.targetObject,
      relation: link.relationName,
      inverse: link.inverseName,
    };
  if (field.columns) return { ...field, kind: 'composite', columns: { ...field.columns } };
  if (field.options)
    return {
      ...field,
      kind: 'enum',
      column: field.column!,
      enumName: `${typeName}${cap(field.name)}Enum`,
      values: field.options.map((o) => o.value),
      default: field.defaultValue!,
    };
  if (field.settings?.maxLength)
    return { ...field, kind: 'text', column: field.column!, required: !field.isNullable, maxLength: field.settings.maxLength };
  return { ...field, kind: 'timestamp', column: field.column! };
}
