import { BlockList, isIP } from 'node:net';

/** The names a URL uses for this machine (RFC 8252 §7.3: loopback redirect URIs; local tools' origins). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** `url.hostname` names this machine: `localhost`, `127.0.0.1` or `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname);
}

const LOOPBACK_ADDRESSES = new BlockList();
LOOPBACK_ADDRESSES.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK_ADDRESSES.addAddress('::1', 'ipv6');

/** A socket's peer address on the loopback interface (127.0.0.0/8, ::1, or v4-mapped 127.x). */
export function isLoopbackAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return LOOPBACK_ADDRESSES.check(mapped[1], 'ipv4');
  const family = isIP(address);
  return family !== 0 && LOOPBACK_ADDRESSES.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
