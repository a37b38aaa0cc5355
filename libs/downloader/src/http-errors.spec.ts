import { classifyFetchError, FetchErrorCode, HttpFetchError } from './http-errors';

const coded = (code: string, name = 'Error', message = 'boom') => Object.assign(new Error(message), { code, name });

describe('classifyFetchError', () => {
  it.each([
    [coded('UND_ERR_CONNECT_TIMEOUT', 'ConnectTimeoutError'), 'timeout-connect'],
    [coded('ETIMEDOUT'), 'timeout-connect'],
    [coded('UND_ERR_HEADERS_TIMEOUT', 'HeadersTimeoutError'), 'timeout-headers'],
    [coded('UND_ERR_BODY_TIMEOUT', 'BodyTimeoutError'), 'timeout-body'],
    [new HttpFetchError('slow', FetchErrorCode.TotalTimeout, { name: 'TimeoutError' }), 'timeout-total'],
    [new DOMException('The operation was aborted due to timeout', 'TimeoutError'), 'timeout-total'],
    [new HttpFetchError('too slow', FetchErrorCode.TooSlow, { name: 'TimeoutError' }), 'timeout-rate'],
    [coded('ECONNREFUSED'), 'refused'],
    [coded('ECONNRESET'), 'reset'],
    [coded('EPIPE'), 'reset'],
    [coded('UND_ERR_SOCKET', 'SocketError', 'other side closed'), 'reset'],
    [coded('ENOTFOUND'), 'dns'],
    [coded('EAI_AGAIN'), 'dns'],
    [coded('ERR_TLS_CERT_ALTNAME_INVALID'), 'tls'],
    [coded('CERT_HAS_EXPIRED'), 'tls'],
    [coded('DEPTH_ZERO_SELF_SIGNED_CERT'), 'tls'],
    [coded('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), 'tls'],
    [coded('ERR_SSL_WRONG_VERSION_NUMBER'), 'tls'],
    [coded('HPE_INVALID_STATUS', 'HTTPParserError'), 'protocol'],
    [coded('UND_ERR_HTTP_PARSER', 'HTTPParserError'), 'protocol'],
    [Object.assign(new Error('Response does not match the HTTP/1.1 protocol'), { name: 'HTTPParserError', code: undefined }), 'protocol'],
    [coded('UND_ERR_RES_CONTENT_LENGTH_MISMATCH'), 'protocol'],
    [coded('UND_ERR_HEADERS_OVERFLOW', 'HeadersOverflowError'), 'too-large-headers'],
    [coded('HPE_HEADER_OVERFLOW', 'HTTPParserError'), 'too-large-headers'],
    [new HttpFetchError('invalid gzip data: incorrect header check', FetchErrorCode.Decoding), 'decode'],
    [new HttpFetchError('unsupported content-encoding "zstd"', FetchErrorCode.UnsupportedEncoding), 'decode'],
    [coded('Z_DATA_ERROR'), 'decode'],
    [coded('ERR_BROTLI_DECOMPRESSION_FAILED'), 'decode'],
    [new HttpFetchError('no vetted address for a.test', FetchErrorCode.Unvetted), 'unvetted'],
    [new Error('no vetted address for a.test'), 'unvetted'],
    [coded('UND_ERR_ABORTED', 'AbortError'), 'other'],
    [new Error('what'), 'other'],
    ['a string', 'other'],
    [undefined, 'other'],
    [null, 'other'],
  ])('%p → %s', (error, kind) => {
    expect(classifyFetchError(error)).toBe(kind);
  });

  it('looks through causes and aggregate errors', () => {
    expect(classifyFetchError(new TypeError('fetch failed', { cause: coded('ECONNREFUSED') }))).toBe('refused');
    expect(classifyFetchError(new AggregateError([coded('ECONNRESET')], 'all failed'))).toBe('reset');
  });

  it('does not loop on a cause cycle', () => {
    const a: Error & { cause?: unknown } = new Error('a');
    a.cause = a;
    expect(classifyFetchError(a)).toBe('other');
  });
});
