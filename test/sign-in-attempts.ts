import { request as httpRequest } from 'node:http';

/** Sign-in attempts over real HTTP from chosen client addresses, for the throttling tests (docs/security.md). */

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTP request from a chosen loopback address (127.x.y.z), so each test is its own
 * "client address" for the per-address limits, whatever the other suites do meanwhile.
 */
export function send(
  url: string,
  o: { method?: string; form?: Record<string, string>; headers?: Record<string, string>; from?: string } = {},
): Promise<Answer> {
  const body = o.form ? new URLSearchParams(o.form).toString() : undefined;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: o.method ?? (body ? 'POST' : 'GET'),
        localAddress: o.from,
        headers: {
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) } : {}),
          ...o.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The page's form CSRF token and the cookies to send with it, from a GET. */
export async function formFor(url: string, from?: string): Promise<{ csrf: string; cookie: string }> {
  const page = await send(url, { from });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  if (!csrf) throw new Error(`no CSRF field on ${url}: ${page.status} ${page.body.slice(0, 300)}`);
  const cookie = ((page.headers['set-cookie'] as string[] | undefined) ?? []).map((c) => c.split(';')[0]).join('; ');
  return { csrf, cookie };
}

export async function tryLogin(
  url: string,
  email: string,
  password: string,
  from?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const { csrf, cookie } = await formFor(`${url}/login`, from);
  return send(`${url}/login`, { form: { _csrf: csrf, email, password }, headers: { cookie, ...headers }, from });
}

export function expectThrottled(res: Answer): void {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter > 0).toBe(true);
  expect(res.body).toMatch(/Too many attempts/);
  expect(res.body).toMatch(/try again in \d+ (second|minute)s?/i);
}
