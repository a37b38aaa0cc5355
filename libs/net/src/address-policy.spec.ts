import { AddressPolicy, isNonPublicAddress, metadataAddress } from './address-policy';
import { embeddedIpv4 } from './embedded-ipv4';

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

  it.each([
    // IPv4-mapped, in every spelling
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:7f00:1',
    '0000:0000:0000:0000:0000:FFFF:127.0.0.1',
    '::ffff:c0a8:101',
    // IPv4-translated (SIIT) and IPv4-compatible
    '::ffff:0:127.0.0.1',
    '::ffff:0:a00:1',
    '::127.0.0.1',
    '::7f00:1',
    '::10.0.0.1',
    '::169.254.169.254',
    // NAT64 (well-known prefix, and the local-use prefix whatever it embeds)
    '64:ff9b::127.0.0.1',
    '64:ff9b::7f00:1',
    '64:ff9b::a00:1',
    '64:ff9b::c0a8:101',
    '64:ff9b:1::808:808',
    // 6to4 with a private router address
    '2002:7f00:1::',
    '2002:a00:1::1',
    '2002:c0a8:101:1::1',
    '2002:a9fe:a9fe::',
    // Teredo: a private server, or a private client (stored inverted)
    '2001:0:a00:1::1',
    '2001:0:808:808::80ff:fefe',
    // other non-public IPv6 ranges
    'fec0::1',
    '64:ff9b:1::1',
  ])('refuses %s, which is or embeds a non-public address', (address) => expect(isNonPublicAddress(address)).toBe(true));

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '2606:2800:220:1:248:1893:25c8:1946',
    '::ffff:93.184.216.34',
    '::ffff:5db8:d822',
    '64:ff9b::8.8.8.8',
    '64:ff9b::5db8:d822',
    '2002:5db8:d822::1',
    '2001:0:5db8:d822::f7f7:f7f7',
    '2001:4860:4860::8888',
  ])('allows %s', (address) => expect(isNonPublicAddress(address)).toBe(false));

  it('rejects what is not an address', () => expect(() => isNonPublicAddress('example.com')).toThrow(/not an IP/));
});

describe('embeddedIpv4', () => {
  it.each([
    ['::ffff:127.0.0.1', 'ipv4-mapped', ['127.0.0.1']],
    ['::FFFF:7F00:1', 'ipv4-mapped', ['127.0.0.1']],
    ['::ffff:0:a00:1', 'ipv4-translated', ['10.0.0.1']],
    ['::127.0.0.1', 'ipv4-compatible', ['127.0.0.1']],
    ['::1', 'ipv4-compatible', ['0.0.0.1']],
    ['64:ff9b::a9fe:a9fe', 'nat64', ['169.254.169.254']],
    ['64:ff9b:0:0:0:0:192.168.1.1', 'nat64', ['192.168.1.1']],
    ['2002:c0a8:101::1', '6to4', ['192.168.1.1']],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo', ['65.54.227.120', '192.0.2.45']],
  ])('reads %s as %s of %j', (address, form, ipv4) => expect(embeddedIpv4(address)).toEqual({ form, ipv4 }));

  it.each(['127.0.0.1', '2606:4700::1111', '64:ff9b:1::a00:1', '2001:db8::1', 'fe80::1%eth0'])('finds nothing in %s', (address) =>
    expect(embeddedIpv4(address)).toBeUndefined(),
  );
});

describe('metadataAddress', () => {
  it.each([
    ['169.254.169.254', '169.254.169.254'],
    ['169.254.170.2', '169.254.170.2'],
    ['100.100.100.200', '100.100.100.200'],
    ['fd00:ec2::254', 'fd00:ec2::254'],
    ['FD00:EC2:0:0:0:0:0:254', 'FD00:EC2:0:0:0:0:0:254'],
    ['fd20:ce::254', 'fd20:ce::254'],
    ['::ffff:169.254.169.254', '169.254.169.254'],
    ['::ffff:a9fe:a9fe', '169.254.169.254'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
    ['2002:a9fe:a9fe::1', '169.254.169.254'],
    ['::100.100.100.200', '100.100.100.200'],
  ])('finds the metadata endpoint in %s', (address, endpoint) => expect(metadataAddress(address)).toBe(endpoint));

  it.each(['169.254.169.253', '169.254.1.1', '10.0.0.1', 'fd00:ec2::253', '8.8.8.8'])('finds none in %s', (address) => expect(metadataAddress(address)).toBeUndefined());
});

describe('AddressPolicy', () => {
  const allowLoopback = new AddressPolicy({ allowCidrs: ['127.0.0.0/8', '::1/128'] });

  it.each(['127.0.0.1', '127.255.1.2', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '93.184.216.34', '2606:4700::1111'])(
    'with 127.0.0.0/8 and ::1/128 allowed, allows %s',
    (address) => expect(allowLoopback.refusal(address)).toBeUndefined(),
  );

  it.each(['10.0.0.1', '192.168.1.1', '169.254.1.1', '0.0.0.0', '100.64.0.1', '::', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1'])(
    'with 127.0.0.0/8 and ::1/128 allowed, still refuses %s',
    (address) => expect(allowLoopback.refusal(address)).toMatch(/is not public.*DNS_ALLOW_PRIVATE.*DNS_ALLOW_CIDRS/),
  );

  it('refuses every non-public address by default and allows them all with allowPrivate', () => {
    expect(new AddressPolicy().refusal('127.0.0.1')).toBe(
      'address 127.0.0.1 is not public: it is loopback (allow with DNS_ALLOW_PRIVATE / --allow-private, or DNS_ALLOW_CIDRS)',
    );
    expect(new AddressPolicy().refusal('8.8.8.8')).toBeUndefined();
    const open = new AddressPolicy({ allowPrivate: true, allowCidrs: ['127.0.0.0/8'] });
    for (const address of ['10.0.0.1', '::1', '169.254.1.1']) expect(open.refusal(address)).toBeUndefined();
  });

  // An IPv6 address in a non-public range of its own is named by that range, not by what its low 32 bits
  // would be as an IPv4-compatible address (::1 is loopback, not "0.0.0.1").
  it.each([
    ['::1', 'it is loopback'],
    ['::', 'it is unspecified'],
    ['fe80::1', 'it is link-local'],
    ['fd00::1', 'it is unique local'],
    ['ff02::1', 'it is multicast'],
    ['64:ff9b:1::a00:1', 'it is local-use NAT64'],
    ['10.1.2.3', 'it is private'],
    ['100.64.0.1', 'it is carrier-grade NAT space'],
    ['169.254.1.1', 'it is link-local'],
    ['0.0.0.1', 'it is "this" network (unspecified)'],
    ['::ffff:127.0.0.1', 'it is an IPv4-mapped address for 127.0.0.1, which is loopback'],
    ['::a00:1', 'it is an IPv4-compatible address for 10.0.0.1, which is private'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'it is a Teredo address for 10.0.0.1, which is private'],
  ])('says what %s is', (address, what) =>
    expect(new AddressPolicy().refusal(address)).toBe(`address ${address} is not public: ${what} (allow with DNS_ALLOW_PRIVATE / --allow-private, or DNS_ALLOW_CIDRS)`),
  );

  it('names the part of an address no listed subnet allows', () => {
    // Teredo carrying a loopback server and a private client: 127.0.0.0/8 allows the one, not the other.
    expect(allowLoopback.refusal('2001:0:7f00:1:8000:63bf:f5ff:fffe')).toMatch(/a Teredo address for 10\.0\.0\.1, which is private/);
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

  it('judges an address that embeds IPv4 by the CIDRs of what it embeds', () => {
    expect(allowLoopback.refusal('64:ff9b::7f00:1')).toBeUndefined();
    expect(allowLoopback.refusal('::127.0.0.1')).toBeUndefined();
    expect(allowLoopback.refusal('2002:7f00:1::1')).toBeUndefined();
    expect(allowLoopback.refusal('64:ff9b::a00:1')).toBe(
      'address 64:ff9b::a00:1 is not public: it is a NAT64 address for 10.0.0.1, which is private (allow with DNS_ALLOW_PRIVATE / --allow-private, or DNS_ALLOW_CIDRS)',
    );
    expect(new AddressPolicy().refusal('2002:c0a8:101::1')).toMatch(/is not public: it is a 6to4 address for 192\.168\.1\.1, which is private \(/);
    // A whole IPv6 prefix allowed allows what it holds, whatever that embeds.
    expect(new AddressPolicy({ allowCidrs: ['64:ff9b::/96'] }).refusal('64:ff9b::a00:1')).toBeUndefined();
  });

  describe('cloud metadata', () => {
    const endpoints = [
      '169.254.169.254',
      '169.254.170.2',
      '169.254.170.23',
      '169.254.0.23',
      '100.100.100.200',
      '192.0.0.192',
      'fd00:ec2::254',
      'fd00:ec2::23',
      'fd20:ce::254',
    ];
    const embedded = ['::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '::169.254.169.254', '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1'];

    it.each([...endpoints, ...embedded])('refuses %s with allowPrivate and a CIDR that holds it', (address) => {
      const policy = new AddressPolicy({ allowPrivate: true, allowCidrs: ['169.254.0.0/16', '100.64.0.0/10', '192.0.0.0/24', 'fd00::/8', '::/0', '0.0.0.0/0'] });
      expect(policy.refusal(address)).toMatch(/cloud metadata endpoint, refused even with DNS_ALLOW_PRIVATE/);
    });

    it('says how to allow one, naming the endpoint an address embeds', () => {
      expect(new AddressPolicy({ allowPrivate: true }).refusal('64:ff9b::a9fe:a9fe')).toBe(
        'address 64:ff9b::a9fe:a9fe (a NAT64 address for 169.254.169.254) is a cloud metadata endpoint, refused even with DNS_ALLOW_PRIVATE (allow it only by naming it alone in DNS_ALLOW_CIDRS: 169.254.169.254/32)',
      );
      expect(new AddressPolicy().refusal('fd00:ec2::254')).toMatch(/DNS_ALLOW_CIDRS: fd00:ec2::254\/128\)$/);
    });

    it('allows exactly the endpoints named alone', () => {
      const policy = new AddressPolicy({ allowCidrs: ['169.254.169.254/32', 'fd00:ec2:0:0::254/128'] });
      expect(policy.refusal('169.254.169.254')).toBeUndefined();
      expect(policy.refusal('::ffff:169.254.169.254')).toBeUndefined();
      expect(policy.refusal('fd00:ec2::254')).toBeUndefined();
      expect(policy.refusal('169.254.170.2')).toMatch(/cloud metadata/);
      expect(policy.refusal('169.254.169.253')).toMatch(/is not public/);
      // Named alone but private addresses otherwise refused: the named endpoint is still reachable.
      expect(new AddressPolicy({ allowPrivate: true, allowCidrs: ['100.100.100.200/32'] }).refusal('100.100.100.200')).toBeUndefined();
    });

    it('leaves the rest of link-local to allowPrivate', () => {
      const open = new AddressPolicy({ allowPrivate: true });
      for (const address of ['169.254.169.253', '169.254.1.1', 'fd00:ec2::253', '127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::a00:1'])
        expect(open.refusal(address)).toBeUndefined();
    });
  });

  it('rejects what is not a CIDR', () => {
    for (const cidr of ['127.0.0.1', 'localhost/8', '10.0.0.0/x']) expect(() => new AddressPolicy({ allowCidrs: [cidr] })).toThrow(/not a CIDR/);
  });
});
