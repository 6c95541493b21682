import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Principal } from '#auth/principal.js';
import { AppError, TooManyRequestsError } from '#errors/errors.js';
import { errorsFormat, sendImportErrors } from '#records/imports/import-errors-response.js';
import { afterUpload } from '#records/imports/import-route.js';
import { ImportsService, parseImportRequest, type RefusedRow } from '#records/imports/imports.service.js';
import { countsText, downloadText, importPage, importsPage, percentText } from '../../views/settings/imports.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';

/** The signed-in member as the import service sees a caller: the workspace and the role's record and field permissions. */
function principalOf(ctx: SettingsContext): Principal {
  return {
    kind: 'user',
    subjectId: ctx.userId,
    workspaceId: ctx.workspace.id,
    role: {
      id: ctx.role.id,
      name: ctx.role.name,
      objectPermissions: ctx.role.objectPermissions,
      settingsPermissions: ctx.role.settingsPermissions,
      // Fields the role may not update are refused in the upload, as on the REST route.
      fieldPermissions: ctx.role.fieldPermissions,
    },
  };
}

const SHOWN_ERRORS = 100;

/**
 * /settings/imports (docs/settings.md): upload a CSV or NDJSON file and follow the import
 * (the same service as `POST /rest/imports`), for members whose role may create records of
 * the object. The upload is the file as the request body, sent by the page's script with
 * the CSRF token in a header; the import's page follows progress through `status`.
 */
@Controller('settings/imports')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('CREATE_RECORDS')
export class SettingsImportsController {
  constructor(private readonly imports: ImportsService) {}

  @Get()
  async list(@CurrentSettings() ctx: SettingsContext, @Res() res: Response) {
    const principal = principalOf(ctx);
    res.send(importsPage(ctx, { objects: await this.imports.importable(principal), imports: await this.imports.recent(principal) }));
  }

  /** The file as the body (text/csv or application/x-ndjson); answers JSON for the page's script: the import, or the error. */
  @Post()
  async upload(
    @CurrentSettings() ctx: SettingsContext,
    @Query() query: Record<string, unknown>,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    let refused: unknown;
    try {
      const request = parseImportRequest(query, req.headers);
      const length = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
      const started = await this.imports.start(principalOf(ctx), request, req, length);
      res.status(202).json({ data: { import: started }, location: `/settings/imports/${started.id}` });
    } catch (err) {
      refused = err;
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      if (err instanceof TooManyRequestsError) res.setHeader('Retry-After', String(err.retryAfterSeconds));
      res.status(err.status).json({ code: err.code, messages: err.messages });
    } finally {
      afterUpload(req, res, refused);
    }
  }

  @Get(':id')
  async show(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    const principal = principalOf(ctx);
    const summary = await this.imports.get(principal, id);
    const errors: RefusedRow[] = [];
    await this.imports.errors(principal, id, async (refused) => {
      errors.push(refused);
      return errors.length < SHOWN_ERRORS;
    });
    res.send(importPage(ctx, { summary, errors }));
  }

  /** Every refused row, for the page's download link: `?format=csv` (or NDJSON), as `GET /rest/imports/{id}/errors` gives them. */
  @Get(':id/errors')
  async errors(
    @CurrentSettings() ctx: SettingsContext,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ) {
    await sendImportErrors(res, this.imports, principalOf(ctx), id, errorsFormat(query));
  }

  /** For the import's page while it runs: the import, and its counts and progress in the page's words. */
  @Get(':id/status')
  async status(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string) {
    const s = await this.imports.get(principalOf(ctx), id);
    return { data: { import: s }, shown: { counts: countsText(s), percent: percentText(s), download: downloadText(s.failed) } };
  }

  @Post(':id/cancel')
  async cancel(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    await this.imports.cancel(principalOf(ctx), id).catch((err) => {
      // Ended meanwhile: the page shows how.
      if (!(err instanceof AppError) || err.status !== 409) throw err;
    });
    res.redirect(303, `/settings/imports/${id}`);
  }
}
