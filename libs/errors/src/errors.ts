/**
 * Domain errors with stable codes. Services throw these; each transport (REST filter,
 * GraphQL formatError, MCP tool result) maps them once. Services never build responses.
 */
export const ErrorCode = {
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  INVALID_LIMIT: 'INVALID_LIMIT',
  INVALID_ORDER_BY: 'INVALID_ORDER_BY',
  INVALID_FILTER: 'INVALID_FILTER',
  INVALID_CURSOR: 'INVALID_CURSOR',
  INVALID_DEPTH: 'INVALID_DEPTH',
  INVALID_ID: 'INVALID_ID',
  INVALID_JSON: 'INVALID_JSON',
  INVALID_FIELDS: 'INVALID_FIELDS',
  INVALID_GROUP_BY: 'INVALID_GROUP_BY',
  INVALID_AGGREGATE: 'INVALID_AGGREGATE',
  TOO_MANY_GROUPS: 'TOO_MANY_GROUPS',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  RATE_LIMITED: 'RATE_LIMITED',
  INVALID_IDEMPOTENCY_KEY: 'INVALID_IDEMPOTENCY_KEY',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  IDEMPOTENCY_KEY_IN_USE: 'IDEMPOTENCY_KEY_IN_USE',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  QUERY_TIMEOUT: 'QUERY_TIMEOUT',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The code an HTTP status maps to when nothing more specific is known (framework errors). */
export const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: ErrorCode.VALIDATION_FAILED,
  401: ErrorCode.UNAUTHENTICATED,
  403: ErrorCode.FORBIDDEN,
  404: ErrorCode.NOT_FOUND,
  408: ErrorCode.REQUEST_TIMEOUT,
  409: ErrorCode.CONFLICT,
  413: ErrorCode.PAYLOAD_TOO_LARGE,
  415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
  422: ErrorCode.IDEMPOTENCY_KEY_REUSED,
  429: ErrorCode.RATE_LIMITED,
  503: ErrorCode.SERVICE_UNAVAILABLE,
};

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly messages: string[],
  ) {
    super(messages.join('; '));
    this.name = new.target.name;
  }

  /** Machine-readable facts about the error for GraphQL's `extensions.details` (REST keeps its fixed shape; the message says them). */
  details?: Record<string, unknown>;
}

export class BadInputError extends AppError {
  constructor(code: ErrorCode, ...messages: string[]) {
    super(400, code, messages);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super(404, ErrorCode.NOT_FOUND, [message]);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, ErrorCode.CONFLICT, [message]);
  }
}

/**
 * A write that would give a unique field's value to a second live record (docs/data-model.md,
 * "Unique fields"): the field and the record that holds the value, for a client to update
 * that one instead.
 */
export class UniqueConflictError extends ConflictError {
  constructor(
    readonly singular: string,
    readonly field: string,
    readonly existingId: string | null,
  ) {
    super(
      `${field}: another ${singular} already has this value` +
        (existingId ? ` (id ${existingId}); update that one, or create with ?upsert=true` : ''),
    );
    this.details = { field, existingId };
  }
}

export class UnauthenticatedError extends AppError {
  constructor(message: string) {
    super(401, ErrorCode.UNAUTHENTICATED, [message]);
  }
}

/** Too many at once (429): the client may try again after `retryAfterSeconds` (the REST filter sends it as Retry-After). */
export class TooManyRequestsError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, ErrorCode.RATE_LIMITED, [message]);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string) {
    super(403, ErrorCode.FORBIDDEN, [message]);
  }
}
