import { FormBrowser } from '../bench/form-browser.js';
import { PASSWORD } from './public-origin.js';

/** Signs `email` in at the public origin `url` (password PASSWORD); the browser lands on /settings. */
export async function signInAt(url: string, email: string): Promise<FormBrowser> {
  const b = new FormBrowser();
  await b.go(`${url}/login`);
  await b.submit('Sign in', { email, password: PASSWORD });
  expect(b.lastUrl).toBe(`${url}/settings`);
  return b;
}

/** A settings JSON API call with the browser's cookies (if any); the body is parsed when it is JSON. */
export async function settingsJson(
  url: string,
  b: FormBrowser | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(b ? { cookie: b.cookieHeader() } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
