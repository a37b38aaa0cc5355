import { readFileSync } from 'node:fs';
import { domainToASCII } from 'node:url';
import { isPublicSuffix, MAX_COOKIE_BYTES, parseSetCookie } from '@crawler/cookies';
import { z } from 'zod';

/** A cookie a site's settings give: sent to the site's hosts (those its pattern names) from the first request on. */
export interface SeedCookie {
  name: string;
  value: string;
  /** Sent only to this domain and the hosts under it (within the pattern's hosts); absent: every host of the pattern. */
  domain?: string;
  /** Sent only to paths under this one. @defaultValue '/' */
  path?: string;
  /** Sent only over https. @defaultValue false */
  secure?: boolean;
  /** Not sent after this time (ISO 8601). */
  expires?: string;
}

/** A cookie name is an HTTP token; a value holds no `;`, white space at its ends, or control character. */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const COOKIE_VALUE = /^(?:[^\u0000-\u001f\u007f;\s](?:[^\u0000-\u001f\u007f;]*[^\u0000-\u001f\u007f;\s])?)?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** What a problem says instead of the value: a session token must not end up in a log. */
const BAD_VALUE = 'a cookie value may not hold ";", a control character, or white space at its ends (the value is not shown)';

const SeedCookieObject = z
  .object({
    name: z.string().regex(COOKIE_NAME, "a cookie name is a token (letters, digits, !#$%&'*+-.^_`|~)"),
    /** The value as written; or, so that a session token need not sit in the file in clear, one of: */
    value: z.string().optional(),
    /** …the value of this environment variable of every process that reads the file; */
    valueFromEnv: z.string().regex(ENV_NAME, 'an environment variable name (letters, digits, _)').optional(),
    /** …the contents of this file (its last line break dropped), read by every process that reads the settings. */
    valueFromFile: z.string().min(1).optional(),
    domain: z.string().min(1).optional(),
    path: z.string().startsWith('/', 'a cookie path starts with /').optional(),
    secure: z.boolean().optional(),
    expires: z
      .string()
      .refine((text) => !Number.isNaN(Date.parse(text)), 'a date and time, e.g. 2027-01-01T00:00:00Z')
      .optional(),
  })
  .strict()
  .transform((cookie, ctx): SeedCookie => {
    const { valueFromEnv, valueFromFile, value: written, domain, ...rest } = cookie;
    const sources = [written, valueFromEnv, valueFromFile].filter((v) => v !== undefined).length;
    if (sources !== 1) ctx.addIssue({ code: 'custom', path: ['value'], message: 'give the value once: value, valueFromEnv or valueFromFile' });
    let value = written ?? '';
    if (valueFromEnv !== undefined) {
      const found = process.env[valueFromEnv];
      if (found === undefined)
        ctx.addIssue({ code: 'custom', path: ['valueFromEnv'], message: `${valueFromEnv} is not set (it must be, in every process that reads this file)` });
      value = found ?? '';
    }
    if (valueFromFile !== undefined) {
      try {
        value = readFileSync(valueFromFile, 'utf8').replace(/\r?\n$/, '');
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['valueFromFile'], message: `cannot read ${valueFromFile}: ${(error as NodeJS.ErrnoException).code ?? 'error'}` });
      }
    }
    if (!COOKIE_VALUE.test(value))
      ctx.addIssue({ code: 'custom', path: [valueFromEnv ? 'valueFromEnv' : valueFromFile ? 'valueFromFile' : 'value'], message: BAD_VALUE });
    if (Buffer.byteLength(cookie.name) + Buffer.byteLength(value) > MAX_COOKIE_BYTES) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `a cookie's name and value are ${MAX_COOKIE_BYTES} bytes at most` });
    }
    const seed: SeedCookie = { ...rest, name: cookie.name, value };
    if (domain !== undefined) {
      const ascii = domainToASCII(domain.replace(/^\./, '').toLowerCase());
      if (!ascii) ctx.addIssue({ code: 'custom', path: ['domain'], message: `"${domain}" is not a host name` });
      else if (isPublicSuffix(ascii))
        ctx.addIssue({ code: 'custom', path: ['domain'], message: `${ascii} is a public suffix: a cookie for it would go to every site under it` });
      else seed.domain = ascii;
    }
    return seed;
  });

/** A cookie written as a Set-Cookie header would set it (`theme=dark; Path=/docs; Secure`) is read into an object first. */
const SeedCookieEntry = z.preprocess((entry, ctx) => {
  if (typeof entry !== 'string') return entry;
  const parsed = parseSetCookie(entry, Date.now());
  if (!parsed) {
    ctx.addIssue({ code: 'custom', message: 'not a cookie: write name=value, then attributes if any (Path=/; Domain=example.com; Secure; Expires=…)' });
    return z.NEVER;
  }
  return {
    name: parsed.name,
    value: parsed.value,
    ...(parsed.domain ? { domain: parsed.domain } : {}),
    ...(parsed.path ? { path: parsed.path } : {}),
    ...(parsed.secure ? { secure: true } : {}),
    ...(parsed.expiresAt !== undefined ? { expires: new Date(parsed.expiresAt).toISOString() } : {}),
  };
}, SeedCookieObject);

/**
 * A site's `cookies`: a list of cookies, each a Set-Cookie-like string or an object (`name`, one of `value`,
 * `valueFromEnv`, `valueFromFile`, and `domain`, `path`, `secure`, `expires`). Read into plain values: what is
 * checked, stored and applied is `{ name, value, … }` (which is itself a valid entry).
 */
export const SeedCookiesSchema = z.array(SeedCookieEntry).max(50, 'a site sends 50 cookies at most');

/** The settings with every cookie's value hidden: what the control plane lists and the audit records. */
export function withoutCookieValues<T extends { cookies?: readonly SeedCookie[] }>(settings: T): T {
  if (!settings.cookies) return settings;
  return { ...settings, cookies: settings.cookies.map((cookie) => ({ ...cookie, value: '(hidden)' })) };
}
