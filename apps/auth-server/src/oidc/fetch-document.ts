import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';

/** Addresses a document may not come from unless private fetches are allowed (RFC 6890 special-use ranges). */
const SPECIAL_USE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) SPECIAL_USE.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['::ffff:0:0', 96], ['64:ff9b::', 96], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) SPECIAL_USE.addSubnet(network, prefix, 'ipv6');

export function isSpecialUse(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return SPECIAL_USE.check(mapped[1], 'ipv4');
  return SPECIAL_USE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

class RefusedAddress extends Error {}

/**
 * The address is checked where the socket connects (the resolver's answer handed to
 * net.connect), so a name that resolves to a public address for a check and a private one
 * for the connection (DNS rebinding) gets nowhere.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const allowed = addresses.filter((a) => !isSpecialUse(a.address));
    if (!allowed.length) return callback(new RefusedAddress(`${hostname} resolves to a private or special-use address`), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
};

/**
 * Fetches a small https document for the authorization server (client ID metadata
 * documents, SPEC §13): no redirects followed, `timeoutMs` for the whole exchange, at most
 * `maxBytes` of body, public addresses only unless `allowPrivate`. TLS trusts Node's CA
 * store plus the NODE_EXTRA_CA_CERTS file.
 */
export function fetchDocument(url: string, o: { timeoutMs: number; maxBytes: number; allowPrivate: boolean }): Promise<Response> {
  const target = new URL(url);
  if (target.protocol !== 'https:') return Promise.reject(new Error('only https documents are fetched'));
  const literal = target.hostname.replace(/^\[|\]$/g, '');
  if (!o.allowPrivate && isIP(literal) && isSpecialUse(literal)) return Promise.reject(new RefusedAddress(`${literal} is a private or special-use address`));
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
