import { Marked, type Tokens } from 'marked';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { projectRoot } from '#config/config.js';
import { FIELD_TABLES_MARKER, fieldTables, objectList } from './field-tables.js';

/** The documentation pages: markdown sources in `docs/<slug>.md`, listed in `/llms.txt`. */
export interface DocPage {
  slug: string;
  title: string;
  description: string;
}

export const DOC_PAGES: readonly DocPage[] = [
  {
    slug: 'quick-start',
    title: 'Quick start',
    description: 'First calls with curl: get an API key, list, filter, create, page through results.',
  },
  {
    slug: 'rest',
    title: 'REST API',
    description: 'Every /rest endpoint, the list parameters (limit, order_by, filter, cursors, depth) and every error code, with examples.',
  },
  {
    slug: 'graphql',
    title: 'GraphQL API',
    description: 'POST /graphql: queries, mutations, filter and orderBy inputs, Relay pagination, depth and cost limits, error codes.',
  },
  {
    slug: 'authentication',
    title: 'Authentication',
    description:
      'Bearer tokens, API keys and roles, OAuth 2.1 (authorization code + PKCE, refresh, client credentials, dynamic registration) with curl.',
  },
  {
    slug: 'mcp',
    title: 'MCP server',
    description: 'Adding /mcp to an MCP client (OAuth sign-in or an API key), and its tools with their arguments.',
  },
  {
    slug: 'webhooks',
    title: 'Webhooks',
    description:
      'Signed events (company.created, person.updated …) POSTed on every change: payloads, headers, verifying with standardwebhooks, retries.',
  },
  {
    slug: 'vault',
    title: 'Vault',
    description:
      "A workspace's named secrets: /rest/vault/secrets (names and dates; values write-only), revealing only in the app, use in webhook headers.",
  },
  {
    slug: 'data-model',
    title: 'Custom fields',
    description:
      "Each workspace's own fields on companies, people and opportunities: the metadata API, the types, and how to discover a workspace's fields.",
  },
];

/** Where the sources are written: links and examples use this origin, replaced by PUBLIC_URL when served. */
const SOURCE_ORIGIN = 'http://localhost:3000';

export function packageVersion(): string {
  try {
    return JSON.parse(readFileSync(resolve(projectRoot(), 'package.json'), 'utf8')).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const anchor = (text: string) =>
  text
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const STYLE = `
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#fff}
nav{display:flex;flex-wrap:wrap;gap:.3rem 1rem;padding:.7rem 1.5rem;border-bottom:1px solid #e3e6ec;background:#f7f8fa;font-size:.92rem}
nav a{color:#3451b2;text-decoration:none;white-space:nowrap}nav a:hover{text-decoration:underline}
main{max-width:52rem;margin:0 auto;padding:1rem 1.5rem 4rem;overflow-wrap:break-word}
main:focus{outline:none}
.skip-link{position:absolute;left:.75rem;top:-6rem;z-index:1;padding:.5rem .9rem;background:#fff;color:#3451b2;font-weight:600;border:2px solid #3451b2;border-radius:6px}
.skip-link:focus{top:.5rem}
:focus-visible{outline:3px solid #f4b400;outline-offset:2px}
h1,h2,h3{line-height:1.25}h2{margin-top:2.2rem;border-bottom:1px solid #e3e6ec;padding-bottom:.3rem}
a{color:#3451b2}code{font:.88em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f1f3f6;padding:.1em .3em;border-radius:4px;overflow-wrap:anywhere}
pre{background:#f1f3f6;padding:.9rem 1rem;border-radius:6px;overflow:auto}pre code{background:none;padding:0;overflow-wrap:normal}
table{border-collapse:collapse;margin:1rem 0;display:block;overflow:auto}th,td{border:1px solid #dde1e8;padding:.35rem .6rem;text-align:left;vertical-align:top}
th{background:#f7f8fa}blockquote{margin:1rem 0;padding:.2rem 1rem;border-left:4px solid #dde1e8;color:#4a5263}
@media (max-width:600px){nav{padding:.6rem 1rem}main{padding:1rem 1rem 3rem}}
@media (prefers-color-scheme:dark){body{background:#15181e;color:#e3e6ec}nav{background:#1c2028;border-color:#2c313c}.skip-link{background:#15181e;color:#8ea6ff}
nav a,a{color:#8ea6ff}code,pre{background:#222733}th{background:#1c2028}th,td,h2{border-color:#2c313c}}
`;

/**
 * The pages as served: markdown with the public origin filled in, HTML rendered once at
 * startup with `marked`, and `/llms.txt` (llmstxt.org) listing them.
 */
export class DocsLibrary {
  private readonly markdownBySlug = new Map<string, string>();
  private readonly htmlBySlug = new Map<string, string>();
  readonly llmsTxt: string;
  readonly indexHtml: string;
  /** `/`: where to go from the bare origin. */
  readonly landingHtml: string;
  /** `/graphql` opened in a browser: how to call it, instead of a playground loaded from a CDN. */
  readonly graphqlHtml: string;

  constructor(
    private readonly publicUrl: string,
    dir = resolve(projectRoot(), 'docs'),
  ) {
    const slugs = new Set(DOC_PAGES.map((p) => p.slug));
    const marked = new Marked({
      renderer: {
        heading({ tokens, depth }: Tokens.Heading) {
          const inner = this.parser.parseInline(tokens);
          return `<h${depth} id="${anchor(inner)}">${inner}</h${depth}>\n`;
        },
      },
    });
    const render = (markdown: string) =>
      (marked.parse(markdown, { async: false }) as string)
        // Links between pages point at the markdown sources; the HTML pages link to each other.
        .replace(/href="((?:\/docs\/)?)([a-z-]+)\.md(#[^"]*)?"/g, (link, dir: string, slug: string, hash = '') =>
          slugs.has(slug) ? `href="${dir}${slug}${hash}"` : link,
        );

    for (const page of DOC_PAGES) {
      const markdown = readFileSync(resolve(dir, `${page.slug}.md`), 'utf8')
        .replaceAll(SOURCE_ORIGIN, publicUrl)
        .replace(FIELD_TABLES_MARKER, () => fieldTables());
      this.markdownBySlug.set(page.slug, markdown);
      this.htmlBySlug.set(page.slug, this.layout(page.title, render(markdown), `${page.slug}.md`));
    }
    this.llmsTxt = this.buildLlmsTxt();
    this.indexHtml = this.layout('Documentation', render(this.llmsTxt.replaceAll(`${publicUrl}/docs/`, '/docs/')), undefined);
    this.landingHtml = this.layout('Workspace Records Service', render(this.landingMarkdown()), undefined);
    this.graphqlHtml = this.layout('GraphQL endpoint', render(this.graphqlMarkdown()), undefined);
  }

  markdown(slug: string): string | undefined {
    return this.markdownBySlug.get(slug);
  }

  html(slug: string): string | undefined {
    return this.htmlBySlug.get(slug);
  }

  private buildLlmsTxt(): string {
    const url = this.publicUrl;
    const pages = DOC_PAGES.map((p) => `- [${p.title}](${url}/docs/${p.slug}.md): ${p.description}`);
    return [
      '# Workspace Records Service',
      '',
      `> The ${objectList(false)} of a CRM workspace over REST, GraphQL and MCP. Every call carries`,
      '> `Authorization: Bearer <token>`: a role-scoped API key or an OAuth 2.1 access token.',
      '',
      `All endpoints live under ${url}: \`/rest\`, \`/graphql\`, \`/mcp\`, OAuth under \`/oauth\`. ` +
        'Each page below is markdown; the same path without `.md` is the HTML version.',
      '',
      '## Docs',
      '',
      ...pages,
      '',
      '## For agents',
      '',
      `- [A whole MCP session](${url}/docs/mcp.md#a-whole-session): connect, discover the model (describe_object), search, preview a change of many records (dryRun), have the user confirm it.`,
      `- [Generic tools](${url}/docs/mcp.md#generic-tools): every object of the workspace, custom ones included, by name.`,
      '',
      '## API reference',
      '',
      `- [OpenAPI document](${url}/rest/open-api): OpenAPI 3.1 (JSON) of the REST API, generated from the code.`,
      `- [Interactive API reference](${url}/docs/api-reference): the OpenAPI document in Swagger UI, to try calls with a token.`,
      '',
      '## Optional',
      '',
      `- [Protected resource metadata](${url}/.well-known/oauth-protected-resource): RFC 9728; \`/mcp\` has its own at /.well-known/oauth-protected-resource/mcp.`,
      `- [Authorization server metadata](${url}/.well-known/oauth-authorization-server): RFC 8414 discovery of the OAuth endpoints.`,
      `- [API catalog](${url}/.well-known/api-catalog): RFC 9727 linkset of the APIs (/rest, /graphql, /mcp) with their descriptions, docs and metadata.`,
      `- [MCP server card](${url}/.well-known/mcp/server-card.json): where /mcp is, its protocol versions and how to authenticate, before connecting.`,
      '',
    ].join('\n');
  }

  private landingMarkdown(): string {
    return [
      '# Workspace Records Service',
      '',
      `The ${objectList(false)} of a CRM workspace over REST, GraphQL and MCP.`,
      '',
      '- [Documentation](/docs): quick start, REST, GraphQL, authentication, MCP, webhooks.',
      '- [Settings](/settings): sign in to manage API keys, server apps, webhooks, roles and members.',
      '- [llms.txt](/llms.txt): the documentation index for agents and tools.',
      '- [OpenAPI document](/rest/open-api): the REST API under `/rest`, as OpenAPI 3.1.',
      '- [GraphQL](/graphql): `POST /graphql`, described in [the GraphQL guide](/docs/graphql).',
      '- MCP: `/mcp`, described in [the MCP guide](/docs/mcp).',
      '',
    ].join('\n');
  }

  private graphqlMarkdown(): string {
    const query = '{ companies(first: 5) { edges { node { id name } } } }';
    return [
      '# GraphQL',
      '',
      `\`${this.publicUrl}/graphql\` answers \`POST\` requests with a JSON body \`{"query": "…", "variables": {…}}\` ` +
        'and `Authorization: Bearer <token>`: an API key (created in [Settings](/settings/api-keys)) or an OAuth access token.',
      '',
      '```sh',
      `curl -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' ${this.publicUrl}/graphql \\`,
      `  -d '{"query": "${query}"}'`,
      '```',
      '',
      'A `GET` runs queries too (not mutations): the query in `?query=`, with `Accept: application/json` and, ' +
        'against cross-site requests, an `apollo-require-preflight: 1` header.',
      '',
      'Queries, mutations, filters, pagination, limits and errors: [the GraphQL guide](/docs/graphql).',
      '',
    ].join('\n');
  }

  private layout(title: string, body: string, markdownHref: string | undefined): string {
    const nav = [
      `<a href="/docs">Docs</a>`,
      ...DOC_PAGES.map((p) => `<a href="/docs/${p.slug}">${escapeHtml(p.title)}</a>`),
      `<a href="/docs/api-reference">API reference</a>`,
      markdownHref ? `<a href="/docs/${markdownHref}">Markdown</a>` : `<a href="/llms.txt">llms.txt</a>`,
    ].join('');
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Workspace Records Service</title>
${markdownHref ? `<link rel="alternate" type="text/markdown" href="/docs/${markdownHref}">\n` : ''}<style>${STYLE}</style>
</head>
<body>
<a class="skip-link" href="#content">Skip to content</a>
<nav aria-label="Documentation">${nav}</nav>
<main id="content" tabindex="-1">
${body}</main>
</body>
</html>
`;
  }
}
