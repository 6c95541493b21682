import { Controller, Get, Query, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { listAudit, type AuditFilter } from '#identity/audit-log.js';
import { listMembers } from '#identity/members.js';
import { AppError, BadInputError, ErrorCode } from '#errors/errors.js';
import { auditPage } from '../../views/settings/audit.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';

const API_PARAMS = ['actor', 'action', 'limit', 'starting_after'];

/** A query parameter given once, or undefined; twice is a 400. */
function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || typeof value === 'string') return value;
  throw new BadInputError(ErrorCode.VALIDATION_FAILED, `${name} must be given once`);
}

/**
 * /settings/audit (any settings permission): the workspace's audit log, newest first, to the
 * second, filtered by actor and action. The form sends empty fields for "anyone" and "any
 * action"; an empty field is no filter.
 */
@Controller('settings/audit')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('ANY_SETTINGS')
export class AuditController {
  constructor(private readonly ds: DataSource) {}

  @Get()
  async page(@CurrentSettings() ctx: SettingsContext, @Query() query: Record<string, unknown>, @Res() res: Response) {
    const given = (name: string) => single(query, name)?.trim() || undefined;
    const filter: AuditFilter = { actor: given('actor'), action: given('action') };
    const before = given('before');
    const actors = (await listMembers(this.ds, ctx.workspace.id)).map((m) => m.email);
    try {
      const found = await listAudit(this.ds, ctx.workspace.id, { ...filter, before });
      res.send(auditPage(ctx, { ...found, paged: before !== undefined, filter, actors }));
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      res.status(400).send(auditPage(ctx, { entries: [], paged: false, filter, actors, error: err.messages.join(' ') }));
    }
  }
}

/**
 * `GET /settings/api/audit` (docs/settings.md): the same log as JSON for scripts run with the
 * session, `?actor=&action=&limit=` (1 to 200, default 50), and `starting_after` (a
 * `pageInfo.endCursor`) for the next page, as the REST lists do.
 */
@Controller('settings/api/audit')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('ANY_SETTINGS')
export class AuditApiController {
  constructor(private readonly ds: DataSource) {}

  @Get()
  async list(@CurrentSettings() ctx: SettingsContext, @Query() query: Record<string, unknown>) {
    const unknown = Object.keys(query).find((k) => !API_PARAMS.includes(k));
    if (unknown !== undefined)
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        `unknown query parameter "${unknown.slice(0, 100)}"; allowed: ${API_PARAMS.join(', ')}`,
      );
    const limit = single(query, 'limit');
    if (limit !== undefined && (!/^\d{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > 200))
      throw new BadInputError(ErrorCode.VALIDATION_FAILED, `limit must be an integer from 1 to 200; got "${limit.slice(0, 100)}"`);
    const { entries, next } = await listAudit(this.ds, ctx.workspace.id, {
      actor: single(query, 'actor'),
      action: single(query, 'action'),
      limit: limit === undefined ? undefined : Number(limit),
      before: single(query, 'starting_after'),
      cursorName: 'starting_after',
    });
    return { data: { auditLog: entries }, pageInfo: { hasNextPage: next !== undefined, endCursor: next ?? null } };
  }
}
