import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { cookieHeader, cookieKey, cookiesFor, isExpired, MAX_AGE_SECONDS, MAX_COOKIES_PER_SITE, parseSetCookie, StoredCookie, storableCookie } from '@crawler/cookies';
import type { SeedCookie } from '@crawler/site-settings';
import { STATE_STORE, StateStore } from '@crawler/state';
import { registrableDomain } from '@crawler/url';

/** What one response's `Set-Cookie` headers did to its site's jar (counted, never logged with values). */
export interface CookiesStored {
  stored: number;
  deleted: number;
  /** Not kept: unparseable, another site's Domain, a public suffix, Secure over http, or the site's jar full. */
  refused: number;
}

/**
 * The sites' cookie jars: one hash per registrable site in the state store (namespace `cookies`, key
 * `site:<registrable domain>`, field `domain;path;name` → the cookie as JSON), so every downloader replica
 * sends what any of them was given, and a cookie can only ever be read for its own site. A hash holds at most
 * MAX_COOKIES_PER_SITE cookies: when it is full a new cookie is not kept, the ones it has are (a session set
 * at login is not pushed out by the trackers that follow). It lives as long as its longest-lived cookie (a
 * session cookie: DOWNLOADER_SESSION_COOKIE_MS after it was set), so Redis keeps no site's cookies for ever.
 */
@Injectable()
export class CookieJarService {
  static readonly NAMESPACE = 'cookies';
  private readonly store: StateStore;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {
    this.store = state.namespace(CookieJarService.NAMESPACE);
  }

  /**
   * The `Cookie` header of a request to `url`: the site's stored cookies that match it, and the seeded ones
   * (site settings) that match it and whose name none of those has (the site's own newer value wins).
   */
  async header(url: URL, seeds: readonly SeedCookie[] | undefined, now = Date.now()): Promise<string | undefined> {
    const stored = this.config.downloader.cookies ? cookiesFor(await this.read(url, now), url, now) : [];
    if (!seeds?.length) return cookieHeader(stored);
    const names = new Set(stored.map((c) => c.name));
    const seeded = seeds.filter((seed) => !names.has(seed.name)).map((seed) => seedAsStored(seed, url));
    return cookieHeader(cookiesFor([...stored, ...seeded], url, now));
  }

  /** Keeps what a response to `url` may set (RFC 6265 §5.3); an expired cookie deletes the one it names. */
  async remember(url: URL, setCookies: readonly string[], now = Date.now()): Promise<CookiesStored> {
    const done: CookiesStored = { stored: 0, deleted: 0, refused: 0 };
    if (!setCookies.length || !this.config.downloader.cookies) return done;
    const key = jarKey(url);
    const existing = new Map((await this.read(url, now)).map((c) => [cookieKey(c), c]));
    for (const header of setCookies) {
      const parsed = parseSetCookie(header, now);
      const cookie = parsed && storableCookie(parsed, url, now);
      if (!cookie || 'refused' in cookie) {
        done.refused++;
        continue;
      }
      const field = cookieKey(cookie);
      if (isExpired(cookie, now)) {
        await this.store.hashDelete(key, [field]);
        existing.delete(field);
        done.deleted++;
        continue;
      }
      // A cookie replaced keeps its creation time (§5.3 step 11.3): its place in the Cookie header.
      const kept = { ...cookie, createdAt: existing.get(field)?.createdAt ?? cookie.createdAt };
      const lifeMs = cookie.expiresAt !== undefined ? Math.min(cookie.expiresAt - now, MAX_AGE_SECONDS * 1000) : this.config.downloader.sessionCookieMs;
      if (await this.store.hashSetBounded(key, field, JSON.stringify(kept), MAX_COOKIES_PER_SITE, Math.max(1, Math.ceil(lifeMs)))) {
        existing.set(field, kept);
        done.stored++;
      } else {
        done.refused++;
      }
    }
    return done;
  }

  /** The site's cookies, the expired ones dropped from the store on the way. */
  private async read(url: URL, now: number): Promise<StoredCookie[]> {
    const key = jarKey(url);
    const cookies: StoredCookie[] = [];
    const expired: string[] = [];
    for (const [field, json] of Object.entries(await this.store.hashGetAll(key))) {
      let cookie: StoredCookie;
      try {
        cookie = JSON.parse(json);
      } catch {
        // Not ours (written by hand, or by a newer release): no cookie, and gone before it is read again.
        expired.push(field);
        continue;
      }
      if (isExpired(cookie, now)) expired.push(field);
      else cookies.push(cookie);
    }
    if (expired.length) await this.store.hashDelete(key, expired);
    return cookies;
  }
}

const jarKey = (url: URL) => `site:${registrableDomain(url.hostname.replace(/^\[|\]$/g, ''))}`;

/** A seeded cookie as the jar's rules read it: for every host of its pattern unless it names a domain, set before anything the site set. */
function seedAsStored(seed: SeedCookie, url: URL): StoredCookie {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const expiresAt = seed.expires === undefined ? undefined : Date.parse(seed.expires);
  return {
    name: seed.name,
    value: seed.value,
    domain: seed.domain ?? host,
    hostOnly: seed.domain === undefined,
    path: seed.path ?? '/',
    secure: seed.secure ?? false,
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    createdAt: 0,
  };
}
