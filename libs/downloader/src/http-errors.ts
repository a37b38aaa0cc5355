import type { FetchErrorKind } from '@crawler/contracts';

/**
 * Why a fetch failed, as a small stable vocabulary for metrics labels and log fields. The kinds are read
 * from undici's error codes (`UND_ERR_*`, and llhttp's `HPE_*` on its parser errors), Node's errno codes,
 * zlib's codes and the `TimeoutError` of an `AbortSignal.timeout`; nothing here depends on message wording
 * except as a last resort for errors that carry no code.
 */
export type { FetchErrorKind };

/** Codes the fetcher itself gives to the errors it raises. */
export const FetchErrorCode = {
  /** The whole request (connect, headers and body) took longer than `totalTimeoutMs`. */
  TotalTimeout: 'ERR_FETCH_TOTAL_TIMEOUT',
  /** The body arrived slower than the minimum transfer rate over a whole window. */
  TooSlow: 'ERR_FETCH_TOO_SLOW',
  /** The body is not valid data for its `Content-Encoding`. */
  Decoding: 'ERR_FETCH_CONTENT_DECODING',
  /** A `Content-Encoding` the fetcher cannot decode. */
  UnsupportedEncoding: 'ERR_FETCH_UNSUPPORTED_ENCODING',
  /** The connection was about to go to a name with no vetted address. */
  Unvetted: 'ERR_FETCH_UNVETTED_ADDRESS',
  /** The proxy answered CONNECT with something else than 2xx, or not as HTTP. */
  ProxyRefused: 'ERR_FETCH_PROXY_REFUSED',
  /** The proxy did not answer CONNECT within the connect timeout. */
  ProxyTimeout: 'ERR_FETCH_PROXY_TIMEOUT',
} as const;

/** An error raised by the fetcher itself, with a `code` like undici's and Node's own errors. */
export class HttpFetchError extends Error {
  constructor(
    message: string,
    readonly code: (typeof FetchErrorCode)[keyof typeof FetchErrorCode],
    options?: { cause?: unknown; name?: string },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = options?.name ?? 'HttpFetchError';
  }
}

const BY_CODE: Record<string, FetchErrorKind> = {
  [FetchErrorCode.TotalTimeout]: 'timeout-total',
  [FetchErrorCode.TooSlow]: 'timeout-rate',
  [FetchErrorCode.Decoding]: 'decode',
  [FetchErrorCode.UnsupportedEncoding]: 'decode',
  [FetchErrorCode.Unvetted]: 'unvetted',
  [FetchErrorCode.ProxyRefused]: 'proxy',
  [FetchErrorCode.ProxyTimeout]: 'timeout-connect',
  UND_ERR_CONNECT_TIMEOUT: 'timeout-connect',
  ETIMEDOUT: 'timeout-connect',
  UND_ERR_HEADERS_TIMEOUT: 'timeout-headers',
  UND_ERR_BODY_TIMEOUT: 'timeout-body',
  UND_ERR_HEADERS_OVERFLOW: 'too-large-headers',
  HPE_HEADER_OVERFLOW: 'too-large-headers',
  ECONNREFUSED: 'refused',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ECONNABORTED: 'reset',
  // undici's "other side closed" / "socket closed": the peer hung up while a response was expected.
  UND_ERR_SOCKET: 'reset',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EAI_FAIL: 'dns',
  EAI_NONAME: 'dns',
  EAI_NODATA: 'dns',
  ENODATA: 'dns',
  ESERVFAIL: 'dns',
  ENOTIMP: 'dns',
  EREFUSED: 'dns',
  EBADRESP: 'dns',
  // A body shorter (or longer) than its Content-Length, and undici's parser complaints without an HPE code.
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'protocol',
  UND_ERR_INFO: 'protocol',
  // HTTPParserError: undici 7 leaves its code undefined; the fetcher fills in this one.
  UND_ERR_HTTP_PARSER: 'protocol',
  EPROTO: 'tls',
};

/** Maps any error a fetch can reject with to its kind ('other' when nothing is recognised). */
export function classifyFetchError(error: unknown): FetchErrorKind {
  // Wrappers (fetch's "fetch failed", AggregateError of happy eyeballs…) keep the real error in `cause`
  // or `errors`: look through a few levels.
  const seen = new Set<unknown>();
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object' && !seen.has(current); depth++) {
    seen.add(current);
    const kind = classifyOne(current as ErrorLike);
    if (kind !== 'other') return kind;
    const e = current as ErrorLike;
    current = e.cause ?? (Array.isArray(e.errors) ? e.errors[0] : undefined);
  }
  return 'other';
}

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown[];
}

function classifyOne(e: ErrorLike): FetchErrorKind {
  const code = typeof e.code === 'string' ? e.code : '';
  const name = typeof e.name === 'string' ? e.name : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (code && BY_CODE[code]) return BY_CODE[code];
  // The reason of AbortSignal.timeout() (a DOMException whose numeric code is 23).
  if (name === 'TimeoutError') return 'timeout-total';
  if (/^HPE_/.test(code) || name === 'HTTPParserError') return 'protocol';
  if (/^(ERR_(TLS|SSL)_|ERR_OSSL_|CERT_|UNABLE_TO_(GET|VERIFY|DECRYPT)|DEPTH_ZERO_SELF_SIGNED|SELF_SIGNED_CERT|HOSTNAME_MISMATCH)/.test(code)) return 'tls';
  // zlib (Z_DATA_ERROR, Z_BUF_ERROR…) and brotli (ERR_BROTLI_…, ERR__ERROR_FORMAT_…) decoder failures.
  if (/^(Z_|ERR_BROTLI|ERR__ERROR_|ERR_ZLIB)/.test(code)) return 'decode';
  if (/^no vetted address\b/i.test(message)) return 'unvetted';
  return 'other';
}
