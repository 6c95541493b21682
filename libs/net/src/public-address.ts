import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Outbound requests to URLs that someone else chose (client ID metadata documents,
 * webhook targets): only public addresses, checked on the address the socket connects to.
 */

/** Addresses refused unless private targets are allowed (RFC 6890 special-use ranges). */
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

export class RefusedAddress extends Error {}

/** The host of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** A literal private address in the URL is refused before any connection is tried. */
export function assertNotLiteralSpecialUse(url: URL): void {
  const literal = hostOf(url);
  if (isIP(literal) && isSpecialUse(literal)) throw new RefusedAddress(`${literal} is a private or special-use address`);
}

/**
 * The address is checked where the socket connects (the resolver's answer handed to
 * net.connect), so a name that resolves to a public address for a check and a private one
 * for the connection (DNS rebinding) gets nowhere.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const allowed = addresses.filter((a) => !isSpecialUse(a.address));
    if (!allowed.length) return callback(new RefusedAddress(`${hostname} resolves to a private or special-use address`), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
};
