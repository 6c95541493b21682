import { Controller, Get, Res, SetMetadata } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { readinessChecks } from './readiness.js';
import { isDraining } from './shutdown-state.js';

/** The records API's bearer guard lets routes with this metadata through (libs/auth `Public`). */
const PUBLIC = SetMetadata('auth:public', true);

/**
 * README.md, Operations health checks, public and without credentials, on both apps:
 * `/health/live` is 200 while the process serves (a restart is the only cure when it is
 * not); `/health/ready` is 200 when the database answers within a second, 503 otherwise
 * and while the process drains for shutdown (take it out of the load balancer), and 503
 * too when a queue worker of the process is short of workers and cannot start more
 * (readiness.ts).
 */
@PUBLIC
@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly dataSource: DataSource,
  ) {}

  @Get('live')
  live(@Res({ passthrough: true }) res: Response) {
    res.setHeader('Cache-Control', 'no-store');
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(@Res({ passthrough: true }) res: Response) {
    res.setHeader('Cache-Control', 'no-store');
    const database = isDraining()
      ? 'draining'
      : (
          await this.health
            .check('database')
            .attempt(async () => void (await this.dataSource.query('SELECT 1')))
            .withTimeout(1000)
        ).database.status;
    if (database !== 'up') {
      res.status(503);
      return { status: 'unavailable', checks: { database } };
    }
    const workers = readinessChecks();
    const checks = { database, ...workers };
    if (Object.values(workers).includes('down')) {
      res.status(503);
      return { status: 'unavailable', checks };
    }
    return { status: 'ok', checks };
  }
}
