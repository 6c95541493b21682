import { assertNotLiteralSpecialUse, isSpecialUse } from './public-address.js';

/**
 * The one address check of every outbound request to a URL someone else chose (webhook
 * targets, client metadata documents). Ranges from the IANA special-purpose address
 * registries (RFC 6890 and its updates).
 */
describe('isSpecialUse', () => {
  it.each([
    // IPv4
    '0.0.0.0',
    '10.1.2.3',
    '100.64.0.1',
    '127.0.0.1',
    '169.254.169.254',
    '172.16.0.1',
    '192.0.0.8',
    '192.0.2.1',
    '192.88.99.1',
    '192.168.1.1',
    '198.18.0.1',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '240.0.0.1',
    '255.255.255.255',
    // IPv6
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '100::1',
    '2001:db8::1',
    '2001::1',
    '2001:2::1',
    // Translation and embedding ranges, whatever IPv4 address they carry
    '::7f00:1',
    '::a00:1',
    '::8.8.8.8', // IPv4-compatible, ::/96 (deprecated, RFC 4291 §2.5.5.1)
    '2002:7f00:1::',
    '2002:808:808::1', // 6to4, 2002::/16
    '64:ff9b::a00:1',
    '64:ff9b::808:808', // NAT64, 64:ff9b::/96
    '64:ff9b:1::a00:1',
    '64:ff9b:1::808:808', // local-use NAT64, 64:ff9b:1::/48 (RFC 8215)
    'fec0::1', // site-local, fec0::/10 (deprecated, RFC 3879)
    '::ffff:0:7f00:1',
    '::ffff:0:808:808', // IPv4-translated, ::ffff:0:0:0/96 (RFC 6145)
    // IPv4-mapped: judged by the IPv4 address inside
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    // Not an address at all
    'example.com',
    '',
    '0x7f.1',
    '127.1',
  ])('refuses %s', (address) => {
    expect(isSpecialUse(address)).toBe(true);
  });

  it.each(['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8'])(
    'allows %s',
    (address) => {
      expect(isSpecialUse(address)).toBe(false);
    },
  );

  it('refuses a literal special-use address in a URL before any connection', () => {
    for (const url of [
      'https://[::7f00:1]/hook',
      'https://[2002:7f00:1::]/x',
      'https://[64:ff9b:1::a00:1]/x',
      'https://[fec0::1]/x',
      'https://[::ffff:0:7f00:1]/x',
      'https://0x7f.1/x',
    ]) {
      expect(() => assertNotLiteralSpecialUse(new URL(url))).toThrow(/private or special-use/);
    }
    expect(() => assertNotLiteralSpecialUse(new URL('https://[2606:4700:4700::1111]/x'))).not.toThrow();
  });
});
