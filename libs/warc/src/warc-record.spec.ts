import { WARCParser } from 'warcio';
import { base32, httpRequestHead, httpResponseHead, serializeRecord, sha1Digest, storedResponseHeaders, targetUri, warcDate } from './warc-record';

describe('digests', () => {
  it('base32 follows RFC 4648 (test vectors of §10, unpadded)', () => {
    const vectors: Array<[string, string]> = [
      ['', ''],
      ['f', 'MY'],
      ['fo', 'MZXQ'],
      ['foo', 'MZXW6'],
      ['foob', 'MZXW6YQ'],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI'],
    ];
    for (const [input, output] of vectors) expect(base32(Buffer.from(input))).toBe(output);
  });

  it('sha1Digest is the sha1:BASE32 form other WARC tools write (empty payload: 3I42H3S6…)', () => {
    expect(sha1Digest(Buffer.alloc(0))).toBe('sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ');
    expect(sha1Digest(Buffer.from('ab'), Buffer.from('c'))).toBe(sha1Digest(Buffer.from('abc')));
  });
});

describe('stored response headers (decoded payload)', () => {
  it('renames the codings, sets Content-Length to the stored length', () => {
    expect(storedResponseHeaders({ 'content-type': 'text/html', 'content-encoding': 'gzip', 'transfer-encoding': 'chunked', 'content-length': '99' }, 1234)).toEqual([
      ['content-type', 'text/html'],
      ['x-orig-content-encoding', 'gzip'],
      ['x-orig-transfer-encoding', 'chunked'],
      ['content-length', '1234'],
    ]);
  });

  it('adds Content-Length when the response had none (chunked)', () => {
    expect(storedResponseHeaders([['Transfer-Encoding', 'chunked']], 5)).toEqual([
      ['x-orig-Transfer-Encoding', 'chunked'],
      ['content-length', '5'],
    ]);
  });

  it('for a revisit (payload elsewhere) keeps Content-Length only if no coding made it describe other bytes', () => {
    expect(storedResponseHeaders({ 'content-length': '10' }, undefined)).toEqual([['content-length', '10']]);
    expect(storedResponseHeaders({ 'content-length': '10', 'content-encoding': 'br' }, undefined)).toEqual([
      ['x-orig-content-length', '10'],
      ['x-orig-content-encoding', 'br'],
    ]);
  });

  it('rejects header names and values that would break the block', () => {
    expect(() => storedResponseHeaders({ 'x-a': 'one\r\ntwo' }, 0)).toThrow(/x-a has a value .* CR, LF or NUL/);
    expect(() => storedResponseHeaders({ 'bad name': 'v' }, 0)).toThrow(/not an HTTP token/);
  });
});

describe('HTTP heads', () => {
  it('writes header values byte for byte as latin1 (how Node hands them over)', () => {
    const head = httpResponseHead(200, undefined, [['x-name', 'caf\u00e9']]);
    expect(head.toString('latin1')).toBe('HTTP/1.1 200 OK\r\nx-name: caf\u00e9\r\n\r\n');
    expect(head.includes(Buffer.from([0xe9]))).toBe(true);
  });

  it('uses the standard reason phrase unless given one', () => {
    expect(httpResponseHead(404, undefined, []).toString()).toBe('HTTP/1.1 404 Not Found\r\n\r\n');
    expect(httpResponseHead(299, undefined, []).toString()).toBe('HTTP/1.1 299\r\n\r\n');
    expect(httpResponseHead(200, 'Fine', []).toString()).toBe('HTTP/1.1 200 Fine\r\n\r\n');
    expect(() => httpResponseHead(42, undefined, [])).toThrow(/3-digit/);
  });

  it('rebuilds the request line and adds Host when missing', () => {
    expect(httpRequestHead('http://example.com:8080/a/b?q=1', { 'user-agent': 'ua' }).toString()).toBe(
      'GET /a/b?q=1 HTTP/1.1\r\nhost: example.com:8080\r\nuser-agent: ua\r\n\r\n',
    );
    expect(httpRequestHead('https://example.com/', [['Host', 'example.com']]).toString()).toBe('GET / HTTP/1.1\r\nHost: example.com\r\n\r\n');
  });
});

describe('records', () => {
  it('serialise to what warcio parses, with Content-Length and a verifiable block digest', async () => {
    const block = Buffer.from('software: test\r\n');
    const bytes = serializeRecord(
      [
        ['WARC-Type', 'warcinfo'],
        ['WARC-Record-ID', '<urn:uuid:00000000-0000-4000-8000-000000000000>'],
        ['WARC-Date', '2024-01-02T03:04:05.000Z'],
        ['Content-Type', 'application/warc-fields'],
      ],
      block,
    );
    const records = [];
    for await (const record of new WARCParser([bytes])) records.push({ record, block: Buffer.from(await record.readFully()) });
    expect(records).toHaveLength(1);
    const [{ record, block: read }] = records;
    expect(record.warcType).toBe('warcinfo');
    expect(record.warcHeaders.protocol).toBe('WARC/1.1');
    expect(record.warcContentLength).toBe(block.length);
    expect(read).toEqual(block);
    expect(record.warcBlockDigest).toBe(sha1Digest(block));
    expect(bytes.subarray(-4).toString()).toBe('\r\n\r\n');
  });

  it('refuse field values with line breaks', () => {
    expect(() => serializeRecord([['WARC-Target-URI', 'http://a/\r\nX: y']], Buffer.alloc(0))).toThrow(/CR or LF/);
  });
});

describe('input checks', () => {
  it('target URIs must be absolute http(s) URLs and come back serialised', () => {
    expect(targetUri('http://Example.com/a b')).toBe('http://example.com/a%20b');
    expect(() => targetUri('/relative')).toThrow(/not an absolute URL/);
    expect(() => targetUri('ftp://example.com/')).toThrow(/not http\(s\)/);
  });

  it('dates must be ISO date-times', () => {
    expect(warcDate('2024-01-02T03:04:05Z')).toBe('2024-01-02T03:04:05.000Z');
    expect(() => warcDate('yesterday', 'fetchedAt')).toThrow(/fetchedAt is not an ISO 8601 date-time/);
    expect(() => warcDate('2024-01-02')).toThrow(/not an ISO 8601 date-time/);
  });
});
