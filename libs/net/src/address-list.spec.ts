import { addressList, inAddressList } from './address-list.js';

/** The proxies the auth server trusts (AUTH_TRUST_PROXY), in Express's `trust proxy` vocabulary. */
describe('addressList', () => {
  it.each([
    [['loopback'], '127.0.0.1', true],
    [['loopback'], '127.9.8.7', true],
    [['loopback'], '::1', true],
    [['loopback'], '::ffff:127.0.0.5', true],
    [['loopback'], '192.0.2.2', false],
    [['172.28.0.0/24'], '172.28.0.7', true],
    [['172.28.0.0/24'], '::ffff:172.28.0.7', true],
    [['172.28.0.0/24'], '172.28.1.7', false],
    [['10.0.0.5'], '10.0.0.5', true],
    [['10.0.0.5'], '10.0.0.6', false],
    [['uniquelocal'], '192.168.3.4', true],
    [['uniquelocal'], 'fd00::2', true],
    [['uniquelocal'], '8.8.8.8', false],
    [['linklocal'], '169.254.1.1', true],
    [['fd00::/64', '10.0.0.0/8'], 'fd00::2', true],
    [['fd00::/64', '10.0.0.0/8'], '10.1.1.1', true],
    [['10.0.0.0/8'], 'not-an-address', false],
  ])('%j holds %s: %s', (entries, address, expected) => {
    expect(inAddressList(addressList(entries), address)).toBe(expected);
  });

  it.each(['private', 'auth-server', '10.0.0.0/33', '10.0.0.0/8/1', '10.0.0.0/x', '::1/129', '10.0.0.0/', '0x7f.1'])(
    'refuses %s, naming it',
    (entry) => {
      expect(() => addressList([entry])).toThrow(`"${entry}" is not an IP address`);
    },
  );
});
