import { GraphQLScalarType, Kind } from 'graphql';

/**
 * Twenty's scalar names, so clients can declare `$id: UUID!`. Both carry strings; their
 * format is checked by the shared service layer, so a malformed value gets the same
 * BAD_USER_INPUT message over GraphQL as over REST (a scalar parse error would surface
 * as GRAPHQL_VALIDATION_FAILED for literals and BAD_USER_INPUT for variables).
 */
function stringScalar(name: string, description: string): GraphQLScalarType<string, string> {
  const read = (value: unknown): string => {
    if (typeof value !== 'string') throw new TypeError(`${name} must be a string`);
    return value;
  };
  return new GraphQLScalarType<string, string>({
    name,
    description,
    serialize: (value) => (value instanceof Date ? value.toISOString() : read(value)),
    parseValue: read,
    parseLiteral: (ast) => {
      if (ast.kind !== Kind.STRING) throw new TypeError(`${name} must be a string`);
      return ast.value;
    },
  });
}

export const UUIDScalar = stringScalar('UUID', 'A UUID such as "0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10".');

export const DateTimeScalar = stringScalar(
  'DateTime',
  'An ISO 8601 date or date-time; written as UTC with milliseconds, e.g. "2024-01-31T12:00:00.000Z". ' +
    'Filters also take a date ("2024-01-31", midnight UTC) or an offset ("2024-01-31T12:00:00+02:00").',
);

/**
 * Twenty's `BigFloat`, for integers beyond GraphQL's 32-bit `Int` (amounts in micros). Sent
 * as a JSON number, read from a number or a numeric string; whether the value is a safe
 * integer is for the service layer to judge, so the message matches REST's.
 */
export const BigFloatScalar = new GraphQLScalarType<unknown, number | string>({
  name: 'BigFloat',
  description: 'A number beyond 2^31, such as an amount in micros (1500000000). Read from a JSON number or a numeric string.',
  serialize: (value) => (typeof value === 'string' ? Number(value) : (value as number)),
  parseValue: (value) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value),
  parseLiteral: (ast) => {
    if (ast.kind === Kind.INT || ast.kind === Kind.FLOAT) return Number(ast.value);
    if (ast.kind === Kind.STRING) return /^-?\d+$/.test(ast.value) ? Number(ast.value) : ast.value;
    throw new TypeError('BigFloat must be a number');
  },
});
