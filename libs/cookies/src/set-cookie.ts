/** A `Set-Cookie` header as parsed (RFC 6265 §5.2), before the storage rules judge it. */
export interface ParsedCookie {
  name: string;
  value: string;
  /** The Domain attribute, lower case, its leading dot dropped; absent: a host-only cookie. */
  domain?: string;
  /** The Path attribute when it starts with `/`; absent: the request's default path. */
  path?: string;
  secure: boolean;
  /** When it expires (ms since the epoch), from Max-Age over Expires; absent: a session cookie. */
  expiresAt?: number;
}

/** The largest name and value together, in bytes (RFC 6265 §6.1's least a user agent keeps; 6265bis' limit). */
export const MAX_COOKIE_BYTES = 4096;
/** Attribute values longer than this are ignored (6265bis §5.6). */
const MAX_ATTRIBUTE_BYTES = 1024;
/** Control characters other than tab make the whole header void (6265bis §5.6). */
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/**
 * Parses one `Set-Cookie` header; null when it sets nothing (no `=`, an empty name, a control character, a name
 * and value over MAX_COOKIE_BYTES). Unknown attributes and ones with bad values are ignored, as browsers do.
 */
export function parseSetCookie(header: string, now: number): ParsedCookie | null {
  if (CONTROL.test(header)) return null;
  const [pair, ...attributes] = header.split(';');
  const equals = pair.indexOf('=');
  if (equals < 0) return null;
  const name = pair.slice(0, equals).trim();
  const value = pair.slice(equals + 1).trim();
  if (!name || Buffer.byteLength(name) + Buffer.byteLength(value) > MAX_COOKIE_BYTES) return null;
  const cookie: ParsedCookie = { name, value, secure: false };
  let maxAge: number | undefined;
  let expires: number | undefined;
  for (const attribute of attributes) {
    const at = attribute.indexOf('=');
    const key = (at < 0 ? attribute : attribute.slice(0, at)).trim().toLowerCase();
    const val = at < 0 ? '' : attribute.slice(at + 1).trim();
    if (Buffer.byteLength(val) > MAX_ATTRIBUTE_BYTES) continue;
    if (key === 'secure') cookie.secure = true;
    // An empty Domain is ignored entirely (§5.2.3): it neither sets nor clears one.
    else if (key === 'domain' && val) cookie.domain = val.replace(/^\./, '').toLowerCase();
    else if (key === 'path') cookie.path = val.startsWith('/') ? val : undefined;
    else if (key === 'expires') expires = parseCookieDate(val) ?? expires;
    else if (key === 'max-age' && /^-?\d+$/.test(val)) {
      // Zero or less: expired at once (the earliest time there is, so that it deletes).
      const seconds = Number(val);
      maxAge = seconds <= 0 ? 0 : now + Math.min(seconds, MAX_AGE_SECONDS) * 1000;
    }
  }
  // Max-Age wins over Expires (§5.3 step 3).
  const expiresAt = maxAge ?? expires;
  if (expiresAt !== undefined) cookie.expiresAt = expiresAt;
  if (cookie.path === undefined) delete cookie.path;
  return cookie;
}

/** The longest lifetime kept, 400 days (6265bis §5.5): a far-off date is no promise a crawl must keep. */
export const MAX_AGE_SECONDS = 400 * 86_400;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * A cookie date by RFC 6265 §5.1.1 (lenient, as the web needs: `Wed, 09 Jun 2021 10:18:14 GMT`, `Sunday,
 * 06-Nov-94 08:49:37 GMT`, `Sun Nov 6 08:49:37 1994`); null when it is not one.
 */
export function parseCookieDate(text: string): number | null {
  let time: number[] | undefined;
  let day: number | undefined;
  let month: number | undefined;
  let year: number | undefined;
  for (const token of text.split(/[\u0009\u0020-\u002f\u003b-\u0040\u005b-\u0060\u007b-\u007e]+/)) {
    if (!token) continue;
    const clock = time === undefined && /^(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\D|$)/.exec(token);
    if (clock) time = clock.slice(1, 4).map(Number);
    else if (day === undefined && /^\d{1,2}(?:\D|$)/.test(token)) day = Number.parseInt(token, 10);
    else if (month === undefined && MONTHS.includes(token.slice(0, 3).toLowerCase())) month = MONTHS.indexOf(token.slice(0, 3).toLowerCase());
    else if (year === undefined && /^\d{2,4}(?:\D|$)/.test(token)) year = Number.parseInt(token, 10);
  }
  if (time === undefined || day === undefined || month === undefined || year === undefined) return null;
  if (year >= 70 && year <= 99) year += 1900;
  else if (year >= 0 && year <= 69) year += 2000;
  const [hours, minutes, seconds] = time;
  if (day < 1 || day > 31 || year < 1601 || hours > 23 || minutes > 59 || seconds > 59) return null;
  const at = Date.UTC(year, month, day, hours, minutes, seconds);
  // 31 February is no date: it would roll over into March.
  return new Date(at).getUTCDate() === day ? at : null;
}
