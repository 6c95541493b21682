import type { NextFunction, Response } from 'express';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { authenticateRequest, type AuthenticatedRequest } from '#auth/auth.guard.js';
import type { BearerAuthService } from '#auth/bearer-auth.service.js';
import { customObjectDeclaration, isReservedObjectName, OBJECTS } from '#records/objects/index.js';
import type { DataModel } from '#records/service/data-model.js';
import { ObjectService } from '#records/service/object-service.js';
import type { RecordsService } from '#records/service/records.service.js';
import type { RestExceptionFilter } from '../http/rest-exception.filter.js';

/**
 * `POST /rest/<plural>` with no query string, the single create an integration sends most,
 * answered without Express's route matching and Nest's request pipeline, by the same calls
 * in the same order: the guard's (`authenticateRequest`),
 * the controller's `create` (the service's create, `{data: {create<Object>}}`, a 201 with
 * the status, headers and bytes of `res.json`, as Nest's Express adapter replies: `created`), and on any error the app's own
 * RestExceptionFilter, so the answer is the one the route gives. Anything else (a query
 * string such as `?upsert=true`, a trailing slash, another method or path) goes on to Nest.
 * It is mounted after every middleware (request id, logging, rate limits, body parsing,
 * read routing, idempotency), so those apply as before. Express matching the ~35 routes
 * registered before a create's and Nest's guard/param/response machinery cost ~60–80 µs of
 * Node CPU per create at 16 writers
 * (docs/benchmark.md). `REST_FAST_PATH=off` sends every request through Nest.
 *
 * A credential the cache keeps is used without the version read before it: the INSERT
 * checks the version, and on any failure the request is authenticated in full before an
 * answer is chosen (RecordsService.create; docs/decisions/0044-credential-checked-by-the-insert.md).
 */
export function restCreateFastPath(deps: {
  auth: BearerAuthService;
  services: readonly ObjectService[];
  filter: RestExceptionFilter;
  /** A workspace's own objects (docs/data-model.md "Custom objects"): their creates take this path too. */
  records: RecordsService;
  models: DataModel;
}): (req: AuthenticatedRequest, res: Response, next: NextFunction) => void {
  const routes = new Map(
    deps.services.map((service) => {
      const object = OBJECTS.find((o) => o.plural === service.object)!;
      return [`/rest/${object.plural}`, { service, key: `create${object.typeName}` }];
    }),
  );
  /** `/rest/<plural>` of an active custom object of the caller's workspace, or undefined (then Nest answers, as for any other path). */
  const customRoute = async (req: AuthenticatedRequest) => {
    const plural = CUSTOM_PATH.exec(req.url)?.[1];
    if (!plural || isReservedObjectName(plural) || !req.headers.authorization) return undefined;
    const principal = deps.auth.cached(req.headers.authorization, 'api')?.principal ?? (await authenticateRequest(deps.auth, req));
    const object = (await deps.models.of(principal)).customObject(plural);
    return object && { service: new ObjectService(deps.records, plural), key: `create${customObjectDeclaration(object).typeName}` };
  };
  return (req, res, next) => {
    if (req.method !== 'POST') return next();
    const known = routes.get(req.url);
    if (!known && !CUSTOM_PATH.test(req.url)) return next();
    void (async () => {
      let route = known;
      try {
        route ??= await customRoute(req);
      } catch {
        return next(); // Nest's route answers (401, 503, …) as it always does
      }
      if (!route) return next();
      try {
        // A credential the cache keeps is checked by the INSERT itself, not by a read before it (RecordsService.create).
        const cached = req.principal ? undefined : deps.auth.cached(req.headers.authorization, 'api');
        const record = cached
          ? await route.service.create(cached.principal, req.body, {
              version: cached.version,
              confirm: () => authenticateRequest(deps.auth, req),
            })
          : await route.service.create(await authenticateRequest(deps.auth, req), req.body);
        if (cached && !req.principal) {
          req.principal = cached.principal;
          cached.used();
        }
        created(res, { data: { [route.key]: record } });
      } catch (err) {
        deps.filter.catch(err, new ExecutionContextHost([req, res, next]));
      }
    })().catch(next);
  };
}

/** A single create of one object: `/rest/<a camelCase name>`, no query string. */
const CUSTOM_PATH = /^\/rest\/([a-z][a-zA-Z0-9]{0,62})$/;

/**
 * The 201 as Express's `res.status(201).json(body)` sends it here (no ETag, no JSON
 * settings, not a GET): the same status, headers and bytes, without its content-type
 * parsing and charset lookups on every create.
 */
function created(res: Response, body: unknown): void {
  const json = JSON.stringify(body);
  res.statusCode = 201;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(json)));
  res.end(json);
}
