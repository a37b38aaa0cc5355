import { DEFAULT_BLOCKED_PORTS, FETCH_BAD_PORTS, parsePortRange, PortPolicy, portOf } from './port-policy';

const at = (port: number | '', scheme = 'http') => new URL(`${scheme}://site.test${port === '' ? '' : `:${port}`}/`);

describe('portOf', () => {
  it('is the explicit port, else the scheme default', () => {
    expect(portOf(at(''))).toBe(80);
    expect(portOf(at('', 'https'))).toBe(443);
    expect(portOf(at(8080))).toBe(8080);
    expect(portOf(new URL('https://site.test:443/'))).toBe(443);
    expect(portOf(new URL('http://[::1]:6379/'))).toBe(6379);
  });
});

describe('parsePortRange', () => {
  it.each([
    ['80', { from: 80, to: 80 }],
    ['8000-8999', { from: 8000, to: 8999 }],
    [' 1024 - 65535 ', { from: 1024, to: 65535 }],
    ['1', { from: 1, to: 1 }],
  ])('reads %j', (entry, range) => expect(parsePortRange(entry)).toEqual(range));

  it.each(['', '0', '65536', '9000-8000', 'http', '80,443', '-80', '80-', '1-2-3'])('refuses %j', (entry) => expect(parsePortRange(entry)).toBeUndefined());
});

describe('PortPolicy', () => {
  const policy = new PortPolicy();

  it.each([80, 443, 1024, 3000, 8000, 8080, 8443, 9199, 9999, 32768, 45123, 65535])('allows %i by default', (port) => expect(policy.refusal(at(port))).toBeUndefined());

  it('allows the default ports of http and https', () => {
    expect(policy.refusal(at(''))).toBeUndefined();
    expect(policy.refusal(at('', 'https'))).toBeUndefined();
  });

  it.each([...FETCH_BAD_PORTS].filter((port) => port > 0))('refuses Fetch bad port %i', (port) =>
    expect(policy.refusal(at(port))).toBe(`port ${port} is one the Fetch standard never lets HTTP reach`),
  );

  it.each([...DEFAULT_BLOCKED_PORTS])('refuses infrastructure port %i by default', (port) =>
    expect(policy.refusal(at(port))).toMatch(new RegExp(`^port ${port} is in URL_FILTER_BLOCKED_PORTS`)),
  );

  it.each([8, 81, 444, 631, 873, 1023])('refuses %i, below 1024 and neither 80 nor 443', (port) =>
    expect(policy.refusal(at(port))).toBe(`port ${port} is not in URL_FILTER_ALLOWED_PORTS`),
  );

  it('takes an allowlist of ports and ranges', () => {
    const narrow = new PortPolicy({ allowed: ['443', '8000-8100'] });
    expect(narrow.refusal(at('', 'https'))).toBeUndefined();
    expect(narrow.refusal(at(8000))).toBeUndefined();
    expect(narrow.refusal(at(8100))).toBeUndefined();
    expect(narrow.refusal(at(''))).toMatch(/port 80 is not in URL_FILTER_ALLOWED_PORTS/);
    expect(narrow.refusal(at(8101))).toMatch(/not in URL_FILTER_ALLOWED_PORTS/);
  });

  it('never allows a Fetch bad port, even named alone', () => {
    const open = new PortPolicy({ allowed: ['1-65535', '25', '6000', '6379'] });
    expect(open.refusal(at(25))).toMatch(/Fetch standard/);
    expect(open.refusal(at(6000))).toMatch(/Fetch standard/);
    expect(open.refusal(at(6379))).toBeUndefined();
  });

  it('lets a blocked port through when the allowlist names it alone, keeping the rest blocked', () => {
    const minio = new PortPolicy({ allowed: ['80', '443', '1024-65535', '9000'] });
    expect(minio.refusal(at(9000))).toBeUndefined();
    expect(minio.refusal(at(9001))).toMatch(/URL_FILTER_BLOCKED_PORTS/);
    expect(minio.refusal(at(6379))).toMatch(/URL_FILTER_BLOCKED_PORTS/);
  });

  it('takes more ports to block, on top of the built-in list, which stays whole', () => {
    const more = new PortPolicy({ blocked: ['8080', '9002-9010'] });
    expect(more.refusal(at(8080))).toMatch(/URL_FILTER_BLOCKED_PORTS/);
    expect(more.refusal(at(9005))).toMatch(/URL_FILTER_BLOCKED_PORTS/);
    for (const port of [6379, 5432, 9000, 11211]) expect(more.refusal(at(port))).toMatch(/URL_FILTER_BLOCKED_PORTS/);
  });

  it("refuses the crawler's own ports (its Redis, S3, PostgreSQL, HTTP port), unless one is named alone", () => {
    const own = new PortPolicy({ own: [7000, 9199] });
    expect(own.refusal(at(7000))).toMatch(/^port 7000 is one of the crawler's own \(REDIS_URL, S3_URL, RECORDS_URL or PORT/);
    expect(own.refusal(at(9199))).toMatch(/crawler's own/);
    expect(own.refusal(at(7001))).toBeUndefined();
    expect(new PortPolicy({ own: [9199], allowed: ['80', '443', '1024-65535', '9199'] }).refusal(at(9199))).toBeUndefined();
  });

  it('rejects what is not a port or range, `none` included: the built-in list cannot be emptied', () => {
    expect(() => new PortPolicy({ allowed: ['http'] })).toThrow(/not a port or port range: "http"/);
    expect(() => new PortPolicy({ blocked: ['70000'] })).toThrow(/not a port or port range: "70000"/);
    expect(() => new PortPolicy({ blocked: ['none'] })).toThrow(/not a port or port range: "none"/);
  });
});
