import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '#auth/auth.guard.js';
import type { Principal } from '#auth/principal.js';
import { afterUpload } from '#records/imports/import-route.js';
import { errorsFormat, sendImportErrors } from '#records/imports/import-errors-response.js';
import { ImportsService, parseImportRequest } from '#records/imports/imports.service.js';

/**
 * Imports over REST (docs/rest.md "Imports"): upload, status, refused rows (NDJSON or CSV), cancel.
 * Described in docs/rest.md rather than the OpenAPI document, whose bodies are JSON.
 */
@ApiExcludeController()
@Controller('rest/imports')
export class ImportsController {
  constructor(private readonly imports: ImportsService) {}

  @Post()
  @HttpCode(202)
  async start(
    @CurrentPrincipal() principal: Principal,
    @Query() query: Record<string, unknown>,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    let refused: unknown;
    try {
      const request = parseImportRequest(query, req.headers);
      const length = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
      return { data: { import: await this.imports.start(principal, request, req, length) } };
    } catch (err) {
      refused = err;
      throw err;
    } finally {
      afterUpload(req, res, refused);
    }
  }

  @Get(':id')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: { import: await this.imports.get(principal, id) } };
  }

  /** `?format=csv` for a spreadsheet: `row,reason` (docs/rest.md "Imports"). */
  @Get(':id/errors')
  async errors(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ) {
    await sendImportErrors(res, this.imports, principal, id, errorsFormat(query));
  }

  @Delete(':id')
  async cancel(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: { import: await this.imports.cancel(principal, id) } };
  }
}
