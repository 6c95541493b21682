import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Outbound requests to URLs that someone else chose (client ID metadata documents,
 * webhook targets): only public addresses, checked on the address the socket connects to.
 */

/**
 * Ranges that embed or translate to another address (IPv4-compatible ::/96, 6to4, NAT64,
 * IPv4-translated, Teredo): where such a packet ends up depends on a relay or translator,
 * possibly one inside our own network, so none is a public target whatever it carries.
 */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/**
 * True unless `address` is an IP address that ipaddr.js classifies as plain `unicast`, i.e.
 * outside every range of the IANA special-purpose registries (RFC 6890 and its updates):
 * private, loopback, link-local, shared, documentation, multicast, reserved, translation
 * ranges. An IPv4-mapped address (::ffff:a.b.c.d, what a dual-stack resolver may answer) is
 * judged by its IPv4 address. Anything that is not a canonical address literal is refused.
 */
export function isSpecialUse(address: string): boolean {
  // Node's isIP, not ipaddr.isValid: the latter also takes `0x7f.1` and `127.1`.
  const family = isIP(address);
  if (family === 0) return true;
  // ipaddr.js reads a dotted tail as IPv4-mapped whatever precedes it (`::8.8.8.8` would be
  // `::ffff:8.8.8.8`); the WHATWG URL parser writes it in hex first, as the socket sees it.
  const canonical = family === 6 ? URL.parse(`http://[${address}]/`)?.hostname.slice(1, -1) : address;
  if (!canonical) return true;
  const parsed = ipaddr.parse(canonical);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return isSpecialUse(v6.toIPv4Address().toString());
    if (v6.match(IPV4_COMPATIBLE)) return true;
  }
  return parsed.range() !== 'unicast';
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
