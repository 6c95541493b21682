import { Controller, Get, Header, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { Public } from '#auth/auth.guard.js';
import { loadConfig } from '#config/config.js';
import { NotFoundError } from '#errors/errors.js';
import { DocsLibrary } from './docs-pages.js';

/** Pages are ours (no user content), so they may run no script and load nothing from elsewhere. */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const CACHE = 'public, max-age=300';

/** `/`, `/llms.txt` and `/docs/<page>[.md]` (docs/quick-start.md links them): public, no credentials. */
@Public()
@ApiExcludeController()
@Controller()
export class DocsController {
  readonly docs = new DocsLibrary(loadConfig().publicUrl);

  @Get()
  landing(@Res() res: Response) {
    sendPage(res, this.docs.landingHtml);
  }

  @Get('llms.txt')
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @Header('Cache-Control', CACHE)
  llmsTxt() {
    return this.docs.llmsTxt;
  }

  @Get('docs')
  index(@Res() res: Response) {
    sendPage(res, this.docs.indexHtml);
  }

  @Get('docs/:page')
  page(@Param('page') page: string, @Res() res: Response) {
    const markdownSlug = page.endsWith('.md') ? page.slice(0, -3) : undefined;
    if (markdownSlug !== undefined) {
      const markdown = this.docs.markdown(markdownSlug);
      if (markdown === undefined) throw this.notFound(page);
      res.setHeader('Cache-Control', CACHE);
      res.type('text/markdown; charset=utf-8').send(markdown);
      return;
    }
    const html = this.docs.html(page);
    if (html === undefined) throw this.notFound(page);
    sendPage(res, html);
  }

  private notFound(page: string) {
    return new NotFoundError(`No documentation page "${page}"; the pages are listed in /llms.txt`);
  }
}

function sendPage(res: Response, html: string) {
  res.setHeader('Cache-Control', CACHE);
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.type('text/html; charset=utf-8').send(html);
}

/**
 * `GET /graphql` from a browser (it prefers text/html) gets a page on how to call the API:
 * GraphiQL would load its scripts from a CDN. Clients asking for JSON go on to GraphQL.
 */
export function graphqlPageForBrowsers(docs: DocsLibrary) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) !== 'text/html') return next();
    res.vary('Accept');
    sendPage(res, docs.graphqlHtml);
  };
}
