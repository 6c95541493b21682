import { extendSchema, parse, type GraphQLSchema } from 'graphql';
import { composite, OBJECTS, optionValues, type CustomField } from '#records/objects/index.js';
import type { WorkspaceModel } from '../records/data-model.js';
import { customObjectResolvers, customObjectsSdl } from './custom-object-schema.js';
import { copySchema } from './schema-copy.js';

/*
 * A workspace's GraphQL schema (docs/data-model.md): the base schema (apps/records-api/schema.gql,
 * unchanged) extended with that workspace's active custom fields — on the object type and
 * on its create, update, filter and order inputs — and its custom objects
 * (custom-object-schema.ts). `extendSchema` keeps every resolver of the base schema; a custom
 * field resolves as the record's own property.
 */

const cap = (name: string) => name[0].toUpperCase() + name.slice(1);
const doc = (text: string | null | undefined) => (text ? `${JSON.stringify(text)} ` : '');

/**
 * GraphQL names of a custom composite field's types: those of the built-in composite of the
 * same type (composites.ts: Currency, Links, Emails), or the Phones types defined here.
 */
const PHONES_TYPES = { object: 'Phones', input: 'PhonesInput', filter: 'PhonesFilter', orderBy: 'PhonesOrderByInput' };
const compositeTypes = (type: string) => (type === 'PHONES' ? PHONES_TYPES : composite(type).graphql);

const SHARED = {
  FloatFilter: `input FloatFilter { eq: Float neq: Float in: [Float!] is: FilterIs gt: Float gte: Float lt: Float lte: Float }`,
  BooleanFilter: `input BooleanFilter { eq: Boolean neq: Boolean is: FilterIs }`,
  DateOnlyFilter: `"A calendar date such as 2026-12-31." input DateOnlyFilter { eq: String neq: String in: [String!] is: FilterIs gt: String gte: String lt: String lte: String }`,
  Phones: `type Phones { primaryPhoneNumber: String primaryPhoneCountryCode: String primaryPhoneCallingCode: String }
    input PhonesInput { primaryPhoneNumber: String primaryPhoneCountryCode: String primaryPhoneCallingCode: String }
    input PhonesFilter { primaryPhoneNumber: StringFilter primaryPhoneCountryCode: StringFilter primaryPhoneCallingCode: StringFilter }
    input PhonesOrderByInput { primaryPhoneNumber: OrderByDirection primaryPhoneCountryCode: OrderByDirection primaryPhoneCallingCode: OrderByDirection }`,
};

interface Mapped {
  output: string;
  input: string;
  filter: string;
  order?: string;
}

function mapField(typeName: string, field: CustomField, shared: Set<string>, types: string[]): Mapped {
  const enumName = `${typeName}${cap(field.name)}Enum`;
  const enumType = () => {
    const values = (field.type === 'RATING' ? optionValues(field).map((value) => ({ value, label: value })) : field.options!).map(
      (o) => `${doc(o.label !== o.value ? o.label : undefined)}${o.value}`,
    );
    types.push(`enum ${enumName} { ${values.join(' ')} }`);
  };
  switch (field.type) {
    case 'TEXT':
      return { output: 'String', input: 'String', filter: 'StringFilter', order: 'OrderByDirection' };
    case 'NUMBER':
      shared.add('FloatFilter');
      return { output: 'Float', input: 'Float', filter: 'FloatFilter', order: 'OrderByDirection' };
    case 'BOOLEAN':
      shared.add('BooleanFilter');
      return { output: 'Boolean', input: 'Boolean', filter: 'BooleanFilter', order: 'OrderByDirection' };
    case 'DATE':
      shared.add('DateOnlyFilter');
      return { output: 'String', input: 'String', filter: 'DateOnlyFilter', order: 'OrderByDirection' };
    case 'DATE_TIME':
      return { output: 'DateTime', input: 'DateTime', filter: 'DateFilter', order: 'OrderByDirection' };
    case 'SELECT':
    case 'RATING':
      enumType();
      types.push(`input ${enumName}Filter { eq: ${enumName} neq: ${enumName} in: [${enumName}!] is: FilterIs }`);
      return { output: enumName, input: enumName, filter: `${enumName}Filter`, order: 'OrderByDirection' };
    case 'MULTI_SELECT':
      enumType();
      types.push(
        `input ${enumName}ListFilter { "Matches when the list holds at least one of these values." containsAny: [${enumName}!] "An empty list counts as NULL." is: FilterIs }`,
      );
      return { output: `[${enumName}!]`, input: `[${enumName}!]`, filter: `${enumName}ListFilter` };
    default: {
      if (field.type === 'PHONES') shared.add('Phones');
      const names = compositeTypes(field.type);
      return { output: names.object, input: names.input, filter: names.filter, order: names.orderBy };
    }
  }
}

/** The SDL that extends the base schema with a workspace's active custom fields; empty when there are none. */
export function workspaceSchemaSdl(model: WorkspaceModel): string {
  const shared = new Set<string>();
  const types: string[] = [];
  const extensions: string[] = [];
  for (const object of OBJECTS) {
    const fields = model.active(object.plural);
    if (!fields.length) continue;
    const mapped = fields.map((field) => ({ field, ...mapField(object.typeName, field, shared, types) }));
    const line = (name: string, type: string, text?: string | null) => `${doc(text)}${name}: ${type}`;
    extensions.push(
      `extend type ${object.typeName} { ${mapped.map((m) => line(m.field.name, m.output, m.field.description ?? m.field.label)).join(' ')} }`,
      `extend input ${object.typeName}CreateInput { ${mapped.map((m) => line(m.field.name, m.input, m.field.description)).join(' ')} }`,
      `extend input ${object.typeName}UpdateInput { ${mapped.map((m) => line(m.field.name, m.input, m.field.description)).join(' ')} }`,
      `extend input ${object.typeName}FilterInput { ${mapped.map((m) => line(m.field.name, m.filter)).join(' ')} }`,
    );
    const ordered = mapped.filter((m) => m.order);
    if (ordered.length)
      extensions.push(`extend input ${object.typeName}OrderByInput { ${ordered.map((m) => line(m.field.name, m.order!)).join(' ')} }`);
  }
  extensions.push(...customObjectsSdl(model, types, (typeName, field, made) => mapField(typeName, field, shared, made)));
  if (!extensions.length) return '';
  return [...[...shared].map((name) => SHARED[name as keyof typeof SHARED]), ...types, ...extensions].join('\n');
}

/**
 * The base schema with a workspace's custom fields and objects, or the base schema itself
 * when it has none; copied without the syntax trees `extendSchema` leaves behind
 * (schema-copy.ts), with the custom objects' resolvers attached on the way.
 */
export function workspaceSchema(base: GraphQLSchema, model: WorkspaceModel): GraphQLSchema {
  const sdl = workspaceSchemaSdl(model);
  if (!sdl) return base;
  return copySchema(extendSchema(base, parse(sdl, { noLocation: true }), { assumeValidSDL: false }), customObjectResolvers(model));
}
