import { Module } from '@nestjs/common';
import { Sql } from '#database/sql.js';
import { ReadRouter } from '#database/read-routing.js';
import { OBJECT_SERVICES, OBJECT_SERVICES_PROVIDER } from './object-service.js';
import { CountCache } from './count-cache.js';
import { DataModel } from './data-model.js';
import { RecordsService } from './records.service.js';
import { RecordRepository } from './record-repository.js';
import { RecordWriter } from './record-writer.js';
import { RecordPolicy } from './record-policy.js';
import { ExportsService } from './exports.service.js';
import { SearchService } from './search.service.js';

/** What the layer lends the modules that import it (CountCache stays its own). */
const EXPORTED = [
  Sql,
  ReadRouter,
  DataModel,
  RecordRepository,
  RecordWriter,
  RecordPolicy,
  RecordsService,
  ExportsService,
  SearchService,
  ...OBJECT_SERVICES,
  OBJECT_SERVICES_PROVIDER,
];

/**
 * The records layer every app imports — the records API's REST, GraphQL and MCP transports,
 * the auth server's settings pages and the CLI: RecordsService (the one service between a
 * caller and SQL) with the repository, writer and permission policy it calls (imports write
 * through the same writer), and the per-object handles that bind it to one object. Nothing
 * here imports an app. The DataSource comes from the root TypeORM module (global).
 */
@Module({ providers: [CountCache, ...EXPORTED], exports: EXPORTED })
export class RecordsModule {}
