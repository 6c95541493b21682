import { existsSync, readFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { createSecureContext, rootCertificates, type ConnectionOptions, type SecureContext } from 'node:tls';
import { assertNotLiteralSpecialUse, publicOnlyLookup } from '#net/public-address.js';

export interface FetchOptions {
  timeoutMs: number;
  maxBytes: number;
  allowPrivate: boolean;
}

/**
 * Fetches a small https document for the authorization server (client ID metadata
 * documents, draft-ietf-oauth-client-id-metadata-document): no redirects followed,
 * `timeoutMs` for the whole exchange, at most `maxBytes` of body, public addresses only
 * unless `allowPrivate`. TLS trusts Node's CA store plus the NODE_EXTRA_CA_CERTS file.
 *
 * Anyone can name the URL, so whatever its server answers (any status line, a reset, a body
 * without end, no answer) settles the promise once and never throws from a socket's
 * listener, where an exception would end the process. Only a 200 is a document: any other
 * status is refused here, so no Response is ever built from a status the Fetch standard
 * forbids (101, 205 with a body, 600 and above).
 */
export function fetchDocument(url: string, o: FetchOptions): Promise<Response> {
  let target: URL;
  try {
    target = new URL(url);
    if (target.protocol !== 'https:') throw new Error('only https documents are fetched');
    if (!o.allowPrivate) assertNotLiteralSpecialUse(target);
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise<Response>((resolve, reject) => {
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(err instanceof Error ? err : new Error(String(err)));
    };
    const timer = setTimeout(() => fail(new Error(`no complete answer within ${o.timeoutMs} ms`)), o.timeoutMs);
    const options: RequestOptions & ConnectionOptions = {
      secureContext: trustedCertificates(),
      headers: { accept: 'application/json' },
      lookup: o.allowPrivate ? undefined : publicOnlyLookup,
      agent: false,
    };
    const req = request(target, options, (res) => {
      res.on('error', fail);
      res.on('aborted', () => fail(new Error('the connection closed before the document ended')));
      if (res.statusCode !== 200) return fail(new Error(`unexpected response status ${res.statusCode}`));
      const declared = Number(res.headers['content-length']);
      if (declared > o.maxBytes) return fail(new Error(`the document is larger than ${o.maxBytes} bytes`));
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > o.maxBytes) fail(new Error(`the document is larger than ${o.maxBytes} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        if (settled) return;
        try {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
          const response = new Response(Buffer.concat(chunks), { status: 200, headers });
          settled = true;
          clearTimeout(timer);
          resolve(response);
        } catch (err) {
          fail(err);
        }
      });
    });
    req.on('error', fail);
    // A 1xx other than 100 Continue, or a 101 without our asking: nothing we can read a document from.
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      fail(new Error('unexpected response status 101'));
    });
    req.end();
  });
}

let trusted: SecureContext | undefined;
/**
 * Node's CA store plus NODE_EXTRA_CA_CERTS, built once: parsing some 150 certificates for
 * every fetch cost more CPU than the rest of the fetch.
 */
function trustedCertificates(): SecureContext {
  if (!trusted) {
    const extra = process.env.NODE_EXTRA_CA_CERTS;
    trusted = createSecureContext({ ca: [...rootCertificates, ...(extra && existsSync(extra) ? [readFileSync(extra, 'utf8')] : [])] });
  }
  return trusted;
}

interface Kept {
  expires: number;
  outcome: Promise<{ status: number; headers: [string, string][]; body: Buffer }>;
}

/**
 * `fetchDocument` with each URL's outcome kept for `keepMs`, a failure as much as a
 * document: a URL is fetched at most once in that time however often it is named, so one
 * request cannot make this server fetch a failing (or slow, or huge) URL again and again.
 * A document that is fetched and then refused (bad JSON, wrong client_id) is kept too, so
 * its refusal is also from memory. At most `maxEntries` URLs are kept (the oldest go first).
 */
export function keptFetch(
  o: FetchOptions & { keepMs: number; maxEntries: number },
  fetcher: typeof fetchDocument = fetchDocument,
): (url: string) => Promise<Response> {
  const kept = new Map<string, Kept>();
  return async (url) => {
    const now = Date.now();
    let entry = kept.get(url);
    if (!entry || entry.expires <= now) {
      kept.delete(url);
      const outcome = fetcher(url, o).then(async (res) => ({
        status: res.status,
        headers: [...res.headers],
        body: Buffer.from(await res.arrayBuffer()),
      }));
      // Kept as a settled promise either way; the caller below sees the rejection.
      outcome.catch(() => undefined);
      entry = { expires: now + o.keepMs, outcome };
      kept.set(url, entry);
      for (const [key, old] of kept) {
        if (kept.size <= o.maxEntries && old.expires > now) break;
        if (key !== url) kept.delete(key);
      }
    }
    const { status, headers, body } = await entry.outcome;
    return new Response(body, { status, headers });
  };
}
