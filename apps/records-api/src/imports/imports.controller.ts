import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { once } from 'node:events';
import { CurrentPrincipal } from '#auth/auth.guard.js';
import type { Principal } from '#auth/principal.js';
import { afterUpload } from './import-route.js';
import { ImportsService, parseImportRequest } from './imports.service.js';

/**
 * Imports over REST (docs/rest.md "Imports"): upload, status, refused rows, cancel.
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

  @Get(':id/errors')
  async errors(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Res() res: Response) {
    let started = false;
    let gone = false;
    res.on('close', () => (gone = true));
    await this.imports.errors(principal, id, async (line) => {
      if (gone) return false;
      if (!started) {
        started = true;
        res.status(200).setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
      }
      if (!res.write(line)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      return !gone;
    });
    if (!started) res.status(200).setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
    res.end();
  }

  @Delete(':id')
  async cancel(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: { import: await this.imports.cancel(principal, id) } };
  }
}
