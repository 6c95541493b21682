import http from 'node:http';
import { useEmptyDatabase } from './factories.js';
import { startPublicOrigin, type PublicOrigin } from './public-origin.js';

/**
 * The records API forwards the auth server's paths (docs/architecture.md). It tells its own
 * paths apart before the proxy parses the URL: a path that URL parsing turns into a
 * forwarded one (dot segments, escaped dots, backslashes) must still be forwarded, exactly
 * as the proxy's parsed-path check decides, and the API's own paths must stay its own.
 */
describe('Auth-server paths forwarded by the records API', () => {
  const db = useEmptyDatabase('authproxy');
  let origin: PublicOrigin;
  beforeAll(async () => {
    origin = await startPublicOrigin({ DATABASE_URL: db.url });
  });
  db.beforeDrop(() => origin?.close());

  /** A request with the path sent exactly as written (fetch would normalise it). */
  const raw = (path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${origin.url}/`, { path }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    });

  const METADATA = '/.well-known/oauth-authorization-server';
  /** The auth server's own not-found (Nest's default body), never the records API's envelope. */
  const authServerNotFound = (path: string) => ({ statusCode: 404, error: 'Not Found', message: `Cannot GET ${path}` });

  it('forwards an auth-server path', async () => {
    const res = await raw(METADATA);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).issuer).toBe(origin.url);
  });

  // Forwarded as sent (the auth server does not resolve them, so it answers 404): what matters is who answers.
  it.each([
    `/rest/..${METADATA}`,
    `/rest/%2e%2e${METADATA}`,
    `/rest/.%2E${METADATA}`,
    `/graphql/..${METADATA}`,
    `/mcp/x/../..${METADATA}`,
    `/rest\\..${METADATA}`,
  ])('forwards %s, which URL parsing makes an auth-server path', async (path) => {
    const res = await raw(path);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toEqual(authServerNotFound(path));
  });

  it.each([
    ['/rest/companies', 401, 'UNAUTHENTICATED'],
    ['/rest/companies?x=/oauth/token', 401, 'UNAUTHENTICATED'],
    ['/rest/companies/..', 401, 'UNAUTHENTICATED'],
    ['/rest', 404, 'NOT_FOUND'],
    ['/mcp', 401, 'UNAUTHENTICATED'],
  ])('keeps %s its own (the records API answers)', async (path, status, code) => {
    const res = await raw(path);
    expect(res.status).toBe(status);
    expect(JSON.parse(res.body)).toMatchObject({ code, requestId: expect.any(String) });
  });
});
