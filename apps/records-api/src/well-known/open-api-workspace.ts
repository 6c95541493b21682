import type { OpenAPIObject } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { LRUCache } from 'lru-cache';
import { authenticateRequest } from '#auth/auth.guard.js';
import type { BearerAuthService } from '#auth/bearer-auth.service.js';
import { fieldAccess, restrictionsKey } from '#auth/field-access.js';
import type { Principal } from '#auth/principal.js';
import { fieldType } from '#records/field-types/index.js';
import { describeField, OBJECTS, type CustomField } from '#records/objects/index.js';
import type { DataModel, WorkspaceModel } from '#records/service/data-model.js';
import { BuildQueue, BuildsBusyError } from '../graphql/build-queue.js';
import { sendError } from '../http/body-parsing.js';
import type { RequestWithId } from '../http/request-id.js';
import { addCustomObjects, jsonBytes } from './open-api-custom-objects.js';
import { withoutHiddenFields, type HiddenFields } from './open-api-restricted.js';

type Schema = Record<string, unknown>;

/** The JSON Schema of a custom field's value (docs/data-model.md), as its type gives it. */
function valueSchema(field: CustomField, mode: 'model' | 'input'): Schema {
  return { ...fieldType(field.type).jsonSchema(field, mode), description: field.description ?? field.label };
}

/**
 * The base document with a workspace's custom fields on each object's model, inputs and list
 * parameters, as a role that cannot read `hidden` sees it (none of those named).
 */
export async function workspaceOpenApi(
  base: OpenAPIObject,
  model: WorkspaceModel,
  hidden: HiddenFields = new Map(),
): Promise<OpenAPIObject> {
  const document = structuredClone(base);
  const custom = await addCustomObjects(document, model, hidden);
  const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
  for (const object of [...OBJECTS, ...custom]) {
    const fields = model.active(object.plural).filter((f) => !hidden.get(object.plural)?.has(f.name));
    if (!fields.length) continue;
    for (const [name, mode] of [
      [`${object.typeName}Model`, 'model'],
      [`${object.typeName}CreateInput`, 'input'],
      [`${object.typeName}UpdateInput`, 'input'],
    ] as const) {
      const schema = schemas[name];
      if (!schema) continue;
      const properties = (schema.properties ??= {}) as Record<string, Schema>;
      for (const field of fields) properties[field.name] = valueSchema(field, mode);
      if (name.endsWith('CreateInput')) {
        const required = fields.filter((f) => !f.isNullable && f.defaultValue == null).map((f) => f.name);
        if (required.length) schema.required = [...((schema.required as string[]) ?? []), ...required];
      }
    }
    const note = `This workspace's custom fields: ${fields.map(describeField).join('; ')}.`;
    for (const path of [`/rest/${object.plural}`]) {
      const list = document.paths[path]?.get;
      for (const parameter of (list?.parameters ?? []) as { name: string; description?: string }[]) {
        if (parameter.name === 'filter' || parameter.name === 'order_by')
          parameter.description = `${parameter.description ?? ''} ${note}`.trim();
      }
    }
  }
  document.info.description = `${document.info.description ?? ''} This document describes the workspace of the credential that asked, its own objects and custom fields included${hidden.size ? ', without the fields its role cannot read' : ''}.`;
  return hidden.size ? withoutHiddenFields(document, hidden) : document;
}

/** The fields `principal`'s role cannot read, by object of `model` (none: an empty map). */
function hiddenFields(principal: Principal, model: WorkspaceModel): HiddenFields {
  const hidden = new Map<string, ReadonlySet<string>>();
  for (const plural of model.served) {
    const names = fieldAccess(principal, plural)?.hidden;
    if (names?.size) hidden.set(plural, names);
  }
  return hidden;
}

/** What the workspace documents kept take, at most (each at most 3 MB). */
const DOCUMENTS_BYTES = 24 * 1024 * 1024;

/**
 * `GET /rest/open-api` with a credential whose workspace has custom fields, or whose role
 * cannot read some fields: that workspace's document as the role sees it (kept per workspace
 * model and set of hidden fields, so a role edit applies at the next request). Without a
 * credential, with an invalid one, or for neither: the public base document, unchanged.
 */
export function workspaceOpenApiMiddleware(deps: { base: () => OpenAPIObject; auth: BearerAuthService; models: DataModel }) {
  const builds = new BuildQueue('OpenAPI document');
  // Kept as UTF-8 bytes outside the heap (as a string, a 50-object workspace's 3 MB document took 7 MB of it), bounded
  // in bytes (docs/decisions/0059-custom-objects-open-api-and-mcp.md).
  const documents = new LRUCache<string, Buffer, { model: WorkspaceModel; hidden: HiddenFields }>({
    max: 100,
    maxSize: DOCUMENTS_BYTES,
    sizeCalculation: (bytes) => bytes.length,
    // One build per key however many requests ask for it at once, and one at a time in the process.
    fetchMethod: (_key, _stale, { context }) =>
      builds.run(context.model.workspaceId, async () =>
        jsonBytes(await workspaceOpenApi(deps.base(), context.model, context.hidden), deps.base()),
      ),
  });
  return async (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' || !req.headers.authorization) return next();
    let model: WorkspaceModel;
    let hidden: HiddenFields;
    let key: string;
    try {
      const principal = await authenticateRequest(deps.auth, req);
      model = await deps.models.of(principal);
      hidden = hiddenFields(principal, model);
      if (!model.hasActiveFields && !hidden.size) return next();
      key = `${model.key}\u0000${restrictionsKey(principal, 'read')}`;
    } catch {
      return next();
    }
    let json: Buffer | undefined;
    try {
      json = await documents.fetch(key, { context: { model, hidden } });
    } catch (err) {
      if (err instanceof BuildsBusyError) {
        res.setHeader('Retry-After', String(err.retryAfterSeconds));
        return sendError(req as RequestWithId, res, err);
      }
      throw err;
    }
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.setHeader('cache-control', 'private, no-store');
    res.setHeader('vary', 'Authorization');
    res.end(json);
  };
}
