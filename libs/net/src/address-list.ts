import { BlockList, isIP } from 'node:net';

/**
 * A list of client addresses to trust, as Express's `trust proxy` takes it (proxy-addr): IP
 * addresses, CIDR ranges, and the names `loopback`, `linklocal` and `uniquelocal`.
 */
const NAMED: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

export class AddressListError extends Error {}

/** The entries as a BlockList; an entry that is no address, range or name throws, naming it. */
export function addressList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    for (const range of NAMED[entry] ?? [entry]) {
      const [address, bits, ...rest] = range.split('/');
      const family = isIP(address);
      const max = family === 6 ? 128 : 32;
      const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      if (!family || rest.length || !(prefix <= max)) {
        throw new AddressListError(`"${entry}" is not an IP address, a CIDR range (10.0.0.0/8) or one of ${Object.keys(NAMED).join(', ')}`);
      }
      list.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4');
    }
  }
  return list;
}

/** Whether a socket's peer address is in the list (an IPv4-mapped IPv6 address as its IPv4 address). */
export function inAddressList(list: BlockList, address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return list.check(mapped[1], 'ipv4');
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
