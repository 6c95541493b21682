import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsUUID, ValidateIf } from 'class-validator';
import { columnSurface, fieldType } from '../field-types/index.js';
import { relationFields, type ObjectDeclaration, type StandardField } from '../objects/index.js';
import { EMBEDDED_PER_RECORD } from './constants.js';
import { namedClass, property, type Ctor } from './decorate.js';
import { lendSwagger } from '../field-types/api-property.js';

lendSwagger({ ApiProperty, ApiPropertyOptional });

export { URL_RULE } from '../field-types/column-rest.js';

/*
 * The REST body classes (class-validator rules, enforced by the service layer for REST,
 * GraphQL and MCP alike) and the response models (OpenAPI only) of every object, made
 * from the declarations: each field's property is its registry type's (ColumnSurface,
 * libs/records/src/field-types/). Composite classes are made once per composite type.
 */

const TIMESTAMP_EXAMPLE = '2025-01-31T12:00:00.000Z';

/** A field's input text for `mode`: `update` falls back to `create`, except a composite's (whose update merges sub-fields). */
function inputDescription(field: StandardField, mode: 'create' | 'update'): string | undefined {
  if (mode === 'create') return field.docs?.create;
  return field.docs?.update ?? (fieldType(field.type).composite ? undefined : field.docs?.create);
}

/** What a record's `deletedAt` means, in its model's schema. */
export const deletedAtText = (singular: string) => `Set when the ${singular} was deleted (soft delete).`;

export interface RestClasses {
  create: Ctor;
  update: Ctor;
  model: Ctor;
}

const byObject = new Map<string, RestClasses>();

/** The create/update body classes and the response model of an object. */
export function restClasses(object: ObjectDeclaration, all: readonly ObjectDeclaration[]): RestClasses {
  const found = byObject.get(object.plural);
  if (found) return found;
  const classes: RestClasses = {
    create: namedClass(`${object.typeName}CreateInput`),
    update: namedClass(`${object.typeName}UpdateInput`),
    model: namedClass(`${object.typeName}Model`),
  };
  byObject.set(object.plural, classes);
  // `id` is validated first (as when PersonCreateInput extended PersonUpdateInput).
  property(classes.create, 'id', String, [
    ApiPropertyOptional({ format: 'uuid', description: 'Optional id of your choosing; one that exists already is a 409 CONFLICT.' }),
    ValidateIf((o: { id?: unknown }) => o.id !== undefined),
    IsUUID(),
  ]);
  for (const field of object.fields) {
    const surface = columnSurface(field.type);
    const create = surface.restInput(field, 'create', inputDescription(field, 'create'));
    property(classes.create, field.name, create.design, create.decorators);
    const update = surface.restInput(field, 'update', inputDescription(field, 'update'));
    property(classes.update, field.name, update.design, update.decorators);
  }

  const model = classes.model;
  property(model, 'id', String, [ApiProperty({ format: 'uuid', example: object.docs.idExample })]);
  for (const field of object.fields) {
    const { design, decorators } = columnSurface(field.type).restModel(field);
    property(model, field.name, design, decorators);
  }
  property(model, 'createdAt', String, [ApiProperty({ format: 'date-time', example: TIMESTAMP_EXAMPLE })]);
  property(model, 'updatedAt', String, [ApiProperty({ format: 'date-time', example: TIMESTAMP_EXAMPLE })]);
  property(model, 'deletedAt', Object, [
    ApiProperty({
      type: String,
      format: 'date-time',
      nullable: true,
      example: null,
      description: deletedAtText(object.singular),
    }),
  ]);
  // depth=1: the records this one links to, and the inverse lists docs/rest.md embeds.
  for (const field of relationFields(object)) {
    const target = all.find((o) => o.plural === field.target)!;
    property(model, field.relation, Object, [
      ApiPropertyOptional({
        type: () => restClasses(target, all).model,
        nullable: true,
        description: `Only with depth=1: the linked live ${target.singular}, or null.`,
      }),
    ]);
  }
  for (const source of all) {
    for (const field of relationFields(source)) {
      if (field.target !== object.plural) continue;
      property(model, field.inverse, Array, [
        ApiPropertyOptional({
          type: () => [restClasses(source, all).model],
          description: `Only with depth=1: the ${EMBEDDED_PER_RECORD} oldest live ${source.plural} of the ${object.singular}.`,
        }),
      ]);
    }
  }
  return classes;
}
