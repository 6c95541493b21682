import { ApolloServer, type ApolloServerOptions } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import type { ApolloDriverConfig } from '@nestjs/apollo';
import { Injectable, Module, type OnModuleDestroy } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { LRUCache } from 'lru-cache';
import { BearerAuthService } from '#auth/bearer-auth.service.js';
import { DataModel } from '../records/data-model.js';
import { RecordsModule } from '../records/records.module.js';
import type { GraphqlContext, GraphqlRequest } from './graphql-context.js';
import { workspaceSchema } from './workspace-schema.js';
import { restrictionsKey } from '#auth/field-access.js';
import { restrictedSchema } from './restricted-schema.js';

/** Workspace schemas served at once; the least recently used one is stopped. */
const MAX_SERVERS = 50;
/** Each one's parsed-document cache (the base server's is 4 MB). */
const DOCUMENT_STORE_BYTES = 512 * 1024;

interface Served {
  server: ApolloServer<GraphqlContext>;
  handler: RequestHandler;
}

/**
 * `POST /graphql` for a workspace with custom fields (docs/data-model.md), or for a role
 * that cannot read some fields (restricted-schema.ts): the same Apollo
 * configuration as the base server (plugins, limits, errors, context) over that
 * workspace's schema, one server per workspace and data-model version, made on first use
 * and kept in a bounded cache. Requests of other workspaces, and any request without a
 * valid credential, go on to the base server untouched.
 */
@Injectable()
export class WorkspaceGraphql implements OnModuleDestroy {
  private options?: ApolloDriverConfig;
  private readonly servers = new LRUCache<string, Promise<Served>>({
    max: MAX_SERVERS,
    dispose: (served) => void served.then((s) => s.server.stop()).catch(() => undefined),
  });

  constructor(
    private readonly auth: BearerAuthService,
    private readonly models: DataModel,
  ) {}

  /** The base server's options (graphql-api.module.ts), reused for every workspace's server. */
  configure(options: ApolloDriverConfig): ApolloDriverConfig {
    this.options = options;
    return options;
  }

  onModuleDestroy(): void {
    this.servers.clear();
  }

  /** Mounted on /graphql before the base server; `base` is the built base schema (undefined until built). */
  middleware(base: () => GraphQLSchema | undefined) {
    return async (req: Request, res: Response, next: NextFunction) => {
      const request = req as GraphqlRequest;
      const authorization = req.headers.authorization;
      const baseSchema = base();
      if (!authorization || !this.options || !baseSchema) return next();
      let principal;
      try {
        principal = request.principal ?? (await this.auth.authenticate(authorization));
      } catch {
        return next(); // the base server answers 401 as it always does
      }
      // Kept for the fast path and the base server's context, which would otherwise authenticate again.
      request.principal = principal;
      let served: Served;
      try {
        const model = await this.models.of(principal);
        // A role that cannot read some fields gets its own schema (restricted-schema.ts), per restrictions.
        const restrictions = restrictionsKey(principal, 'read');
        if (!model.hasActiveFields && !restrictions) return next();
        const key = restrictions ? `${model.key}:${restrictions}` : model.key;
        let entry = this.servers.get(key);
        if (!entry) {
          entry = this.start(restrictedSchema(workspaceSchema(baseSchema, model), principal));
          this.servers.set(key, entry);
          entry.catch(() => this.servers.delete(key));
        }
        served = await entry;
      } catch {
        return next(); // the database is away: the base server answers 503
      }
      return served.handler(req, res, next);
    };
  }

  private async start(schema: GraphQLSchema): Promise<Served> {
    const options = this.options!;
    const server = new ApolloServer<GraphqlContext>({
      schema,
      introspection: options.introspection,
      formatError: options.formatError,
      includeStacktraceInErrorResponses: false,
      validationRules: options.validationRules,
      documentStore: new InMemoryLRUCache<DocumentNode>({ maxSize: DOCUMENT_STORE_BYTES }),
      parseOptions: options.parseOptions,
      plugins: [...(options.plugins ?? []), ApolloServerPluginLandingPageDisabled()],
      stopOnTerminationSignals: false,
    } as ApolloServerOptions<GraphqlContext>);
    await server.start();
    const context = options.context as (args: { req: GraphqlRequest }) => Promise<GraphqlContext>;
    return {
      server,
      handler: expressMiddleware(server, { context: ({ req }) => context({ req: req as GraphqlRequest }) }) as RequestHandler,
    };
  }
}

@Module({ imports: [RecordsModule], providers: [WorkspaceGraphql], exports: [WorkspaceGraphql] })
export class WorkspaceGraphqlModule {}
