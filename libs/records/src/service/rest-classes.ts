import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsEmail,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import {
  composite,
  CURRENCY_CODE,
  LINK,
  type CompositeType,
  type FieldDeclaration,
  type ObjectDeclaration,
  type SubField,
} from '../objects/index.js';
import { normalizeTimestamp } from '../query/index.js';
import { EMBEDDED_PER_RECORD } from './constants.js';
import { namedClass, property, type Ctor } from './decorate.js';

/*
 * The REST body classes (class-validator rules, enforced by the service layer for REST,
 * GraphQL and MCP alike) and the response models (OpenAPI only) of every object, made
 * from the declarations. Composite classes are made once per composite type.
 */

/** `acme.com` or `https://acme.com/x`: a bare domain is accepted and kept as given (docs/rest.md). */
export const URL_RULE = { require_protocol: false, protocols: ['http', 'https'] };
const SAFE = Number.MAX_SAFE_INTEGER;
const TIMESTAMP_EXAMPLE = '2025-01-31T12:00:00.000Z';

const IsTimestamp = () =>
  ValidateBy({
    name: 'isTimestamp',
    validator: {
      validate: (value) => typeof value === 'string' && normalizeTimestamp(value) !== undefined,
      defaultMessage: (args) => `${args?.property} must be an ISO 8601 date or date-time such as 2026-12-31 or 2026-12-31T12:00:00Z`,
    },
  });

const inputs = new Map<string, Ctor>();
const models = new Map<string, Ctor>();

function cached(map: Map<string, Ctor>, name: string, build: (cls: Ctor) => void): Ctor {
  let cls = map.get(name);
  if (!cls) {
    cls = namedClass(name);
    map.set(name, cls);
    build(cls);
  }
  return cls;
}

const linkInput = () =>
  cached(inputs, 'LinkInput', (cls) => {
    property(cls, 'url', String, [
      ApiProperty({ description: LINK.url.description, maxLength: LINK.url.maxLength, example: 'https://acme.com/about' }),
      IsString(),
      IsUrl(URL_RULE),
      MaxLength(LINK.url.maxLength),
    ]);
    property(cls, 'label', Object, [
      ApiPropertyOptional({ type: String, nullable: true, maxLength: LINK.label.maxLength, example: 'About us' }),
      IsOptional(),
      IsString(),
      MaxLength(LINK.label.maxLength),
    ]);
  });

const linkModel = () =>
  cached(models, 'LinkModel', (cls) => {
    property(cls, 'url', String, [ApiProperty({ example: 'https://acme.com/about' })]);
    property(cls, 'label', Object, [ApiProperty({ type: String, nullable: true, example: 'About us' })]);
  });

function subInputDecorators(sub: SubField): PropertyDecorator[] {
  const description = sub.docs?.restInput;
  const example = sub.docs?.inputExample !== undefined ? sub.docs.inputExample : sub.docs?.example;
  switch (sub.kind) {
    case 'text': {
      const rules =
        sub.format === 'email'
          ? [IsEmail()]
          : sub.format === 'url'
            ? [IsString(), IsUrl(URL_RULE)]
            : sub.format === 'currency'
              ? [
                  IsString(),
                  Matches(CURRENCY_CODE, { message: '$property must be an ISO 4217 currency code: three capital letters such as USD' }),
                ]
              : [IsString()];
      return [
        ApiPropertyOptional({
          type: String,
          ...(sub.format === 'email' ? { format: 'email' } : {}),
          nullable: true,
          ...(sub.format === 'currency' ? { pattern: '^[A-Z]{3}$' } : { maxLength: sub.maxLength }),
          example,
          ...(description ? { description } : {}),
        }),
        IsOptional(),
        ...rules,
        ...(sub.format === 'currency' ? [] : [MaxLength(sub.maxLength!)]),
      ];
    }
    case 'bigint':
      return [
        ApiPropertyOptional({
          type: 'integer',
          format: 'int64',
          nullable: true,
          minimum: -SAFE,
          maximum: SAFE,
          example,
          ...(description ? { description } : {}),
        }),
        IsOptional(),
        IsInt({ message: '$property must be an integer (millionths of the currency unit)' }),
        Min(-SAFE, { message: `$property must be at least -${SAFE}` }),
        Max(SAFE, { message: `$property must be at most ${SAFE}` }),
      ];
    case 'number':
      return [
        ApiPropertyOptional({
          type: Number,
          nullable: true,
          minimum: sub.min,
          maximum: sub.max,
          example,
          ...(description ? { description } : {}),
        }),
        IsOptional(),
        IsNumber({ allowNaN: false, allowInfinity: false }),
        ...(sub.min !== undefined ? [Min(sub.min)] : []),
        ...(sub.max !== undefined ? [Max(sub.max)] : []),
      ];
    case 'textList':
      return [
        ApiPropertyOptional({ type: [String], nullable: true, maxItems: sub.maxItems, ...(description ? { description } : {}) }),
        IsOptional(),
        IsArray(),
        ArrayMaxSize(sub.maxItems!),
        IsEmail({}, { each: true }),
      ];
    case 'linkList':
      return [
        ApiPropertyOptional({ type: () => [linkInput()], nullable: true, maxItems: sub.maxItems, ...(description ? { description } : {}) }),
        IsOptional(),
        IsArray(),
        ArrayMaxSize(sub.maxItems!),
        // ValidateNested walks an inner array as a list and finds nothing wrong with `[[]]`: each link must be an object.
        IsObject({ each: true, message: '$property must be a list of links, each an object such as {"url": "acme.com"}' }),
        ValidateNested({ each: true }),
        Type(() => linkInput()),
      ];
  }
}

function subModelDecorators(sub: SubField): PropertyDecorator[] {
  const extra = sub.docs?.model ? { description: sub.docs.model } : {};
  switch (sub.kind) {
    case 'text':
      return [
        ApiProperty({
          type: String,
          ...(sub.format === 'email' ? { format: 'email' } : {}),
          nullable: true,
          example: sub.docs?.example,
          ...extra,
        }),
      ];
    case 'bigint':
      return [ApiProperty({ type: 'integer', format: 'int64', nullable: true, example: sub.docs?.example, ...extra })];
    case 'number':
      return [ApiProperty({ type: Number, nullable: true, example: sub.docs?.example, ...extra })];
    case 'textList':
      return [ApiProperty({ type: [String], example: [] })];
    case 'linkList':
      return [ApiProperty({ type: () => [linkModel()] })];
  }
}

export function compositeInput(type: CompositeType): Ctor {
  return cached(inputs, type.rest.input, (cls) => {
    // Every sub-field input is optional and nullable: tsc emits Object for `x?: T | null`.
    for (const sub of type.subFields) property(cls, sub.name, Object, subInputDecorators(sub));
  });
}

export function compositeModel(type: CompositeType): Ctor {
  return cached(models, type.rest.model, (cls) => {
    for (const sub of type.subFields) {
      property(cls, sub.name, sub.kind === 'textList' || sub.kind === 'linkList' ? Array : Object, subModelDecorators(sub));
    }
  });
}

function inputField(field: FieldDeclaration, mode: 'create' | 'update'): { design: unknown; decorators: PropertyDecorator[] } {
  const description =
    mode === 'create' ? field.docs?.create : (field.docs?.update ?? (field.kind === 'composite' ? undefined : field.docs?.create));
  const described = description ? { description } : {};
  switch (field.kind) {
    case 'text': {
      const example = mode === 'update' && field.docs?.updateExample !== undefined ? field.docs.updateExample : field.docs?.example;
      const options = { minLength: field.required ? 1 : undefined, maxLength: field.maxLength, example, ...described };
      if (!field.required) {
        return {
          design: Object,
          decorators: [
            ApiPropertyOptional({ type: String, nullable: true, ...options }),
            IsOptional(),
            IsString(),
            MaxLength(field.maxLength),
          ],
        };
      }
      const rules = [IsString(), IsNotEmpty(), MaxLength(field.maxLength)];
      return mode === 'create'
        ? { design: String, decorators: [ApiProperty(options), ...rules] }
        : {
            design: String,
            decorators: [ApiPropertyOptional(options), ValidateIf((o: Record<string, unknown>) => o[field.name] !== undefined), ...rules],
          };
    }
    case 'enum':
      return {
        design: String,
        decorators: [
          ApiPropertyOptional({
            enum: [...field.values],
            example: field.docs?.example,
            description: description ?? (mode === 'create' ? `Default ${field.default}.` : undefined),
          }),
          ValidateIf((o: Record<string, unknown>) => o[field.name] !== undefined),
          IsIn([...field.values]),
        ],
      };
    case 'timestamp':
      return {
        design: Object,
        decorators: [
          ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, example: field.docs?.example, ...described }),
          IsOptional(),
          IsTimestamp(),
        ],
      };
    case 'relation':
      return {
        design: Object,
        decorators: [ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, ...described }), IsOptional(), IsUUID()],
      };
    case 'composite': {
      const input = compositeInput(composite(field.type));
      return {
        design: Object,
        decorators: [
          ApiPropertyOptional({ type: () => input, nullable: true, ...described }),
          IsOptional(),
          IsObject(),
          ValidateNested(),
          Type(() => input),
        ],
      };
    }
  }
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
    const create = inputField(field, 'create');
    property(classes.create, field.name, create.design, create.decorators);
    const update = inputField(field, 'update');
    property(classes.update, field.name, update.design, update.decorators);
  }

  const model = classes.model;
  property(model, 'id', String, [ApiProperty({ format: 'uuid', example: object.docs.idExample })]);
  for (const field of object.fields) {
    switch (field.kind) {
      case 'text':
        property(model, field.name, String, [ApiProperty({ example: field.docs?.example })]);
        break;
      case 'enum':
        property(model, field.name, String, [ApiProperty({ enum: [...field.values], example: field.docs?.example })]);
        break;
      case 'timestamp':
        property(model, field.name, Object, [
          ApiProperty({
            type: String,
            format: 'date-time',
            nullable: true,
            example: field.docs?.example,
            description: field.docs?.description,
          }),
        ]);
        break;
      case 'relation':
        property(model, field.name, Object, [ApiProperty({ type: String, format: 'uuid', nullable: true, example: field.docs?.example })]);
        break;
      case 'composite': {
        const type = compositeModel(composite(field.type));
        property(model, field.name, Object, [ApiProperty({ type: () => type })]);
        break;
      }
    }
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
  for (const field of object.fields) {
    if (field.kind !== 'relation') continue;
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
    for (const field of source.fields) {
      if (field.kind !== 'relation' || field.target !== object.plural) continue;
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
