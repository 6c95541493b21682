import type { OpenAPIObject } from '@nestjs/swagger';
import { RECORD_OBJECTS } from '#database/entities/role.entity.js';
import { TEST_EVENT_TYPE, eventObjectOf } from '#webhooks/operations.js';

/** What happens to a record (docs/webhooks.md, "Event types"). */
const ACTIONS = ['created', 'updated', 'deleted', 'restored'] as const;

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const HEADERS = [
  {
    name: 'webhook-id',
    description: 'The event id (the same on every retry and redelivery of this event: deduplicate on it).',
    schema: { type: 'string', format: 'uuid' },
  },
  {
    name: 'webhook-timestamp',
    description: 'Unix seconds when this attempt was signed; refuse values far from now (5 minutes) against replays.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    description:
      'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`, keyed with the base64-decoded part of the secret after `whsec_`.',
    schema: { type: 'string', pattern: '^v1,' },
  },
];

/**
 * OpenAPI 3.1's `webhooks`: one entry per event type (`company.created` …), derived from
 * the record objects, each POST body referencing the REST record schema (`CompanyModel` …).
 */
export function addWebhooks(document: OpenAPIObject, publicUrl: string): void {
  const schemas = ((document.components ??= {}).schemas ??= {});
  const webhooks: Record<string, unknown> = {};
  for (const object of RECORD_OBJECTS) addObjectEvents(schemas, webhooks, eventObjectOf(object), publicUrl);
  addImportCompleted(schemas as Record<string, unknown>, webhooks, publicUrl);
  addTestEvent(schemas as Record<string, unknown>, webhooks, publicUrl);
  (document as unknown as { webhooks: Record<string, unknown> }).webhooks = webhooks;
}

/** The events of one object (`ticket.created` …) in a document that has them already for the others. */
export function addEventsOf(document: OpenAPIObject, singular: string): void {
  const webhooks = ((document as unknown as { webhooks?: Record<string, unknown> }).webhooks ??= {});
  addObjectEvents(((document.components ??= {}).schemas ??= {}), webhooks, singular, document.servers?.[0]?.url ?? '');
}

/** `<singular>.created|updated|deleted|restored`: a schema and a webhook entry each. */
function addObjectEvents(schemas: Record<string, unknown>, webhooks: Record<string, unknown>, singular: string, publicUrl: string): void {
  const modelName = `${capital(singular)}Model`;
  const record = schemas[modelName] ? { $ref: `#/components/schemas/${modelName}` } : { type: 'object' };
  for (const action of ACTIONS) {
    const type = `${singular}.${action}`;
    const schemaName = `${capital(singular)}${capital(action)}Event`;
    const data: Record<string, unknown> = {
      type: 'object',
      required: ['record'],
      properties: {
        record: {
          ...record,
          description:
            action === 'deleted'
              ? `The ${singular} as it was deleted (deletedAt set); an erasure (hard delete) sends only its id.`
              : action === 'restored'
                ? `The ${singular} as it was restored (deletedAt null).`
                : `The ${singular} as REST returns it, after the change.`,
        },
        ...(action === 'updated'
          ? {
              previous: {
                type: 'object',
                description: `The changed fields' previous values, in the ${singular}'s shape (a composite field such as name is given whole).`,
                additionalProperties: true,
              },
            }
          : {}),
      },
    };
    schemas[schemaName] = eventSchema(
      type,
      `Sent when a ${singular} is ${action}.`,
      data,
      'When the change was made (UTC, in its transaction).',
    );
    webhooks[type] = eventPost({
      summary: `${capital(singular)} ${action}`,
      description: `POSTed to each enabled webhook of the workspace whose operations select \`${type}\`. Answer 2xx within 10 s; anything else is retried with exponential backoff for 24 hours. Guide: ${publicUrl}/docs/webhooks`,
      operationId: `webhook_${singular}_${action}`,
      schemaName,
    });
  }
}

/** `import.completed`: one per import when it ends, with its summary (docs/rest.md "Imports"). */
function addImportCompleted(schemas: Record<string, unknown>, webhooks: Record<string, unknown>, publicUrl: string): void {
  const count = { type: 'integer', minimum: 0 };
  const at = { type: ['string', 'null'], format: 'date-time' };
  schemas.ImportCompletedEvent = eventSchema('import.completed', 'Sent once when an import ends, completed or failed.', {
    type: 'object',
    required: ['import'],
    properties: {
      import: {
        type: 'object',
        description: 'The import as GET /rest/imports/{id} gives it.',
        properties: {
          id: { type: 'string', format: 'uuid' },
          object: { type: 'string' },
          mode: { type: 'string', enum: ['create', 'upsert'] },
          match: { type: ['string', 'null'] },
          format: { type: 'string', enum: ['csv', 'ndjson'] },
          status: { type: 'string', enum: ['completed', 'failed'] },
          rowsRead: count,
          linesRead: {
            ...count,
            description: 'Lines of the file read (blank lines and the CSV header row count); every line once completed.',
          },
          created: count,
          updated: count,
          unchanged: count,
          failed: { ...count, description: 'Rows refused; GET /rest/imports/{id}/errors lists them.' },
          progress: { type: 'number', minimum: 0, maximum: 1 },
          bytes: count,
          error: { type: ['string', 'null'], description: 'Why a failed import stopped.' },
          createdAt: { type: 'string', format: 'date-time' },
          startedAt: at,
          finishedAt: at,
        },
      },
    },
  });
  webhooks['import.completed'] = eventPost({
    summary: 'Import completed',
    description: `POSTed to each enabled webhook of the workspace whose operations select \`import.completed\` when an import ends. Guide: ${publicUrl}/docs/rest#imports`,
    operationId: 'webhook_import_completed',
    schemaName: 'ImportCompletedEvent',
  });
}

/** `webhook.test`: sent by "Send test event", to one webhook whatever its operations (docs/webhooks.md, "Event types"). */
function addTestEvent(schemas: Record<string, unknown>, webhooks: Record<string, unknown>, publicUrl: string): void {
  schemas.WebhookTestEvent = eventSchema(
    TEST_EVENT_TYPE,
    "A test: nothing changed. Sent once, when a member asks for it on the webhook's settings page.",
    {
      type: 'object',
      required: ['webhook'],
      properties: {
        webhook: {
          type: 'object',
          required: ['id', 'url'],
          properties: { id: { type: 'string', format: 'uuid' }, url: { type: 'string', format: 'uri' } },
        },
      },
    },
  );
  webhooks[TEST_EVENT_TYPE] = eventPost({
    summary: 'Test event',
    description: `POSTed to one webhook when a member presses **Send test event** on its settings page (or calls POST /settings/api/webhooks/{id}/test), whatever its operations; one attempt, no retry. Guide: ${publicUrl}/docs/webhooks#event-types`,
    operationId: 'webhook_test',
    schemaName: 'WebhookTestEvent',
    failure: 'Anything else, a timeout or a refused connection is shown in the attempts; it is not retried.',
  });
}

/** The body every event has (docs/webhooks.md, "Event types"), with its own `data`. */
function eventSchema(type: string, description: string, data: Record<string, unknown>, occurredAt?: string): Record<string, unknown> {
  return {
    type: 'object',
    description,
    required: ['id', 'type', 'workspaceId', 'occurredAt', 'data'],
    properties: {
      id: { type: 'string', format: 'uuid', description: 'The event id (also the webhook-id header).' },
      type: { type: 'string', const: type },
      workspaceId: { type: 'string', format: 'uuid' },
      occurredAt: { type: 'string', format: 'date-time', ...(occurredAt ? { description: occurredAt } : {}) },
      data,
    },
  };
}

/** The signed POST of an event type, its body the schema `schemaName`. */
function eventPost(o: { summary: string; description: string; operationId: string; schemaName: string; failure?: string }) {
  return {
    post: {
      summary: o.summary,
      description: o.description,
      operationId: o.operationId,
      tags: ['webhooks'],
      parameters: HEADERS.map((h) => ({ in: 'header', required: true, ...h })),
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${o.schemaName}` } } } },
      responses: {
        '200': { description: 'Any 2xx marks the event delivered.' },
        default: { description: o.failure ?? 'Anything else, a timeout or a refused connection is retried.' },
      },
    },
  };
}
