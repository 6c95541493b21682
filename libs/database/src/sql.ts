import { Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';

/**
 * Plain SQL on the same pg pool TypeORM manages, for the hot paths (record lists, bearer
 * lookups): one call straight to node-postgres, rows back, nothing else per query.
 */
@Injectable()
export class Sql {
  private readonly pool: Pool;

  constructor(dataSource: DataSource) {
    this.pool = (dataSource.driver as unknown as { master: Pool }).master;
  }

  async rows<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pool.query(sql, params)).rows as T[];
  }
}
