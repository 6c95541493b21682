import { ApolloServer, type ApolloServerOptions } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import type { ApolloDriverConfig } from '@nestjs/apollo';
import { Injectable, Module, type OnModuleDestroy } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { createHash } from 'node:crypto';
import { authenticateRequest } from '#auth/auth.guard.js';
import { BearerAuthService } from '#auth/bearer-auth.service.js';
import { hasFieldRestrictions } from '#auth/field-access.js';
import { loadConfig } from '#config/config.js';
import { registerStats } from '#ops/process-stats.js';
import { DataModel, type WorkspaceModel } from '#records/service/data-model.js';
import { RecordsModule } from '#records/service/records.module.js';
import { ApiAuthModule } from '../http/api-auth.module.js';
import { sendError } from '../http/body-parsing.js';
import type { GraphqlContext, GraphqlRequest } from './graphql-context.js';
import { guardedSchema } from './restricted-schema.js';
import { BuildQueue, BuildsBusyError } from './build-queue.js';
import { SchemaCache, type Built } from './schema-cache.js';
import { schemaNodes } from './schema-copy.js';
import { workspaceSchema, workspaceSchemaSdl } from './workspace-schema.js';

/**
 * Parsed documents of every workspace server, in one store (Apollo prefixes each key with
 * its schema's hash), measured as Apollo measures it: the AST's JSON length.
 */
const DOCUMENT_STORE_BYTES = 1024 * 1024;
/**
 * Heap per type, field, argument and enum value of a schema kept without syntax trees,
 * measured: a 300-field workspace schema (2,325 of them) held 0.34 MB, the base schema's
 * copy (412) 0.09–0.12 MB, the largest model allowed (50 custom objects of 100 fields,
 * 34,608) 11.9 MB (docs/decisions/0052-graphql-schemas-bounded-in-bytes.md).
 */
const BYTES_PER_SCHEMA_NODE = 360;
/** An Apollo server over a schema, measured: ~46 KB; rounded up. */
const BYTES_PER_SERVER = 64 * 1024;

export interface Served {
  schema: GraphQLSchema;
  handler: RequestHandler;
}

/** A request whose workspace (or restricted role) has a schema of its own: the query fast path runs on it, Apollo's server of it answers the rest. */
export type WithServed = Request & { graphqlServed?: Served };

/** The key of a workspace model's schema: a hash of the SDL its custom fields and objects add ('' → the base schema). */
const schemaKeys = new WeakMap<WorkspaceModel, string>();
function schemaKey(model: WorkspaceModel): string {
  let key = schemaKeys.get(model);
  if (key === undefined) {
    const sdl = workspaceSchemaSdl(model);
    key = sdl ? createHash('sha256').update(sdl).digest('base64url') : 'base';
    schemaKeys.set(model, key);
  }
  return key;
}

/**
 * `POST /graphql` for a workspace with custom fields (docs/data-model.md), or for a role
 * that cannot read some fields (restricted-schema.ts): the same Apollo configuration as
 * the base server (plugins, limits, errors, context) over that workspace's schema.
 * Servers are kept by content in a cache bounded in bytes (schema-cache.ts,
 * docs/decisions/0052-graphql-schemas-bounded-in-bytes.md): workspaces with identical
 * custom fields share one; a workspace keeps only its current version; every restricted
 * role of a workspace shares one guarded schema. Requests of other workspaces, and any
 * request without a valid credential, go on to the base server untouched.
 */
@Injectable()
export class WorkspaceGraphql implements OnModuleDestroy {
  private options?: ApolloDriverConfig;
  private readonly cache = new SchemaCache<Served>(Math.max(1, loadConfig().graphqlSchemaCacheMb) * 1024 * 1024);
  private readonly documents = new InMemoryLRUCache<DocumentNode>({ maxSize: DOCUMENT_STORE_BYTES });
  private readonly builds = new BuildQueue();

  constructor(
    private readonly auth: BearerAuthService,
    private readonly models: DataModel,
  ) {
    registerStats('graphqlSchemas', () => this.cache.stats());
  }

  /** The base server's options (graphql-api.module.ts), reused for every workspace's server. */
  configure(options: ApolloDriverConfig): ApolloDriverConfig {
    this.options = options;
    return options;
  }

  onModuleDestroy(): void {
    this.builds.clear();
    this.cache.clear();
  }

  /**
   * Mounted on /graphql before the query fast path and the base server; `base` is the built
   * base schema (undefined until built). It finds the schema the request is served by and
   * leaves it on the request (`graphqlServed`): the fast path runs every query on it, as on
   * the base schema, and `answer` hands what the fast path leaves to that schema's server.
   */
  middleware(base: () => GraphQLSchema | undefined) {
    return async (req: Request, res: Response, next: NextFunction) => {
      const request = req as GraphqlRequest;
      const authorization = req.headers.authorization;
      const baseSchema = base();
      if (!authorization || !this.options || !baseSchema) return next();
      let principal;
      try {
        // Kept on the request (`principal`) for the fast path and the base server's context.
        principal = await authenticateRequest(this.auth, request);
      } catch {
        return next(); // the base server answers 401 as it always does
      }
      let served: Served;
      try {
        const model = await this.models.of(principal);
        const restricted = hasFieldRestrictions(principal);
        // A model whose schema is the base one (its active fields all on a deactivated object) is the base server's too.
        if ((!model.hasActiveFields || schemaKey(model) === 'base') && !restricted) return next();
        served = await this.served(baseSchema, model, restricted);
      } catch (err) {
        if (err instanceof BuildsBusyError) {
          res.setHeader('Retry-After', String(err.retryAfterSeconds));
          return sendError(request, res, err);
        }
        return next(); // the database is away: the base server answers 503
      }
      (req as WithServed).graphqlServed = served;
      return next();
    };
  }

  /** Mounted after the query fast path: what it left of a request with a schema of its own goes to that schema's server. */
  answer() {
    return (req: Request, res: Response, next: NextFunction) => {
      const served = (req as WithServed).graphqlServed;
      return served ? served.handler(req, res, next) : next();
    };
  }

  /** The server for `model`: its own schema, or (for restricted roles) the guarded copy of it. */
  private served(baseSchema: GraphQLSchema, model: WorkspaceModel, guarded: boolean): Promise<Served> {
    const key = schemaKey(model);
    const { workspaceId, version } = model;
    const plain = () =>
      key === 'base'
        ? Promise.resolve({ schema: baseSchema } as Pick<Served, 'schema'>)
        : this.cache.get(workspaceId, version, key, () =>
            this.builds.run(workspaceId, async () => this.start(await workspaceSchema(baseSchema, model), false)),
          );
    if (!guarded) return plain() as Promise<Served>;
    return this.cache.get(workspaceId, version, `${key}:guarded`, async () => {
      const { schema } = await plain();
      return this.builds.run(workspaceId, () => this.start(guardedSchema(schema, model), true));
    });
  }

  /** A server over `schema`; `guarded`: a guarded copy, which shares its inputs and enums with its workspace's schema. */
  private async start(schema: GraphQLSchema, guarded: boolean): Promise<Built<Served>> {
    const options = this.options!;
    const server = new ApolloServer<GraphqlContext>({
      schema,
      introspection: options.introspection,
      formatError: options.formatError,
      includeStacktraceInErrorResponses: false,
      validationRules: options.validationRules,
      documentStore: this.documents,
      cache: options.cache,
      parseOptions: options.parseOptions,
      plugins: [...(options.plugins ?? []), ApolloServerPluginLandingPageDisabled()],
      stopOnTerminationSignals: false,
    } as ApolloServerOptions<GraphqlContext>);
    await server.start();
    const context = options.context as (args: { req: GraphqlRequest }) => Promise<GraphqlContext>;
    // Not stopped when dropped: it holds no timer or socket, and a request may still be running on it.
    return {
      value: {
        schema,
        handler: expressMiddleware(server, { context: ({ req }) => context({ req: req as GraphqlRequest }) }) as RequestHandler,
      },
      bytes: schemaNodes(schema, { outputsOnly: guarded }) * BYTES_PER_SCHEMA_NODE + BYTES_PER_SERVER,
    };
  }
}

@Module({ imports: [RecordsModule, ApiAuthModule], providers: [WorkspaceGraphql], exports: [WorkspaceGraphql] })
export class WorkspaceGraphqlModule {}
