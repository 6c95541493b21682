import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { rootCertificates } from 'node:tls';
import { assertNotLiteralSpecialUse, publicOnlyLookup } from '#net/public-address.js';

/**
 * Fetches a small https document for the authorization server (client ID metadata
 * documents, SPEC §13): no redirects followed, `timeoutMs` for the whole exchange, at most
 * `maxBytes` of body, public addresses only unless `allowPrivate`. TLS trusts Node's CA
 * store plus the NODE_EXTRA_CA_CERTS file.
 */
export function fetchDocument(url: string, o: { timeoutMs: number; maxBytes: number; allowPrivate: boolean }): Promise<Response> {
  const target = new URL(url);
  if (target.protocol !== 'https:') return Promise.reject(new Error('only https documents are fetched'));
  if (!o.allowPrivate) {
    try {
      assertNotLiteralSpecialUse(target);
    } catch (err) {
      return Promise.reject(err);
    }
  }
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  const ca = [...rootCertificates, ...(extra && existsSync(extra) ? [readFileSync(extra, 'utf8')] : [])];
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      { ca, signal: AbortSignal.timeout(o.timeoutMs), headers: { accept: 'application/json' }, lookup: o.allowPrivate ? undefined : publicOnlyLookup },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > o.maxBytes) req.destroy(new Error(`the document is larger than ${o.maxBytes} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
          const status = res.statusCode ?? 502;
          resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers }));
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
