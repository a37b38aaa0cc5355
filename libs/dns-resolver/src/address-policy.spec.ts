import { AddressPolicy, isNonPublicAddress } from './address-policy';

describe('isNonPublicAddress', () => {
  it.each([
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '127.0.0.1',
    '127.8.9.10',
    '169.254.169.254',
    '0.0.0.0',
    '100.64.0.1',
    '224.0.0.251',
    '255.255.255.255',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.1.2.3',
  ])('refuses %s', (address) => expect(isNonPublicAddress(address)).toBe(true));

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34'])(
    'allows %s',
    (address) => expect(isNonPublicAddress(address)).toBe(false),
  );

  it('rejects what is not an address', () => expect(() => isNonPublicAddress('example.com')).toThrow(/not an IP/));
});

describe('AddressPolicy', () => {
  const allowLoopback = new AddressPolicy({ allowCidrs: ['127.0.0.0/8', '::1/128'] });

  it.each(['127.0.0.1', '127.255.1.2', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '93.184.216.34', '2606:4700::1111'])(
    'with 127.0.0.0/8 and ::1/128 allowed, allows %s',
    (address) => expect(allowLoopback.refusal(address)).toBeUndefined(),
  );

  it.each(['10.0.0.1', '192.168.1.1', '169.254.169.254', '0.0.0.0', '100.64.0.1', '::', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1'])(
    'with 127.0.0.0/8 and ::1/128 allowed, still refuses %s',
    (address) => expect(allowLoopback.refusal(address)).toMatch(/is not public.*DNS_ALLOW_PRIVATE.*DNS_ALLOW_CIDRS/),
  );

  it('refuses every non-public address by default and allows them all with allowPrivate', () => {
    expect(new AddressPolicy().refusal('127.0.0.1')).toBe(
      'address 127.0.0.1 is not public (allow with DNS_ALLOW_PRIVATE / --allow-private, or DNS_ALLOW_CIDRS)',
    );
    expect(new AddressPolicy().refusal('8.8.8.8')).toBeUndefined();
    const open = new AddressPolicy({ allowPrivate: true, allowCidrs: ['127.0.0.0/8'] });
    for (const address of ['10.0.0.1', '::1', '169.254.169.254']) expect(open.refusal(address)).toBeUndefined();
  });

  it('allows exactly the listed subnet (boundaries)', () => {
    const policy = new AddressPolicy({ allowCidrs: ['10.1.2.0/24', 'fd00:1::/32'] });
    expect(policy.refusal('10.1.2.0')).toBeUndefined();
    expect(policy.refusal('10.1.2.255')).toBeUndefined();
    expect(policy.refusal('10.1.3.0')).toMatch(/not public/);
    expect(policy.refusal('10.1.1.255')).toMatch(/not public/);
    expect(policy.refusal('fd00:1:ffff::1')).toBeUndefined();
    expect(policy.refusal('fd00:2::1')).toMatch(/not public/);
  });

  it('rejects what is not a CIDR', () => {
    for (const cidr of ['127.0.0.1', 'localhost/8', '10.0.0.0/x']) expect(() => new AddressPolicy({ allowCidrs: [cidr] })).toThrow(/not a CIDR/);
  });
});
