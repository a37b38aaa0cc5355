import http from 'node:http';
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { ConfigError, loadConfig } from '@crawler/config';
import { siteRule } from '@crawler/site-settings';
import { classifyFetchError, FetchRoutes, HttpFetcher } from '@crawler/downloader';
import { ForwardProxy } from '../support/forward-proxy';
import { closeServer } from '../support/local-server';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { makeTestCa, TestCa } from '../support/test-certificates';

const SETTINGS = { userAgent: 'test-bot/1.0', connectTimeoutMs: 2000, headersTimeoutMs: 2000, bodyTimeoutMs: 2000, totalTimeoutMs: 4000 };

/** Routes as the downloader builds them: the crawl's settings, the file's rules, the environment. */
function routes(rules: Record<string, object>, overrides: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}) {
  const config = { ...loadConfig({}, overrides), siteRules: Object.entries(rules).map(([pattern, settings]) => siteRule(pattern, settings)) };
  return FetchRoutes.load(config, env);
}

/** Answers what it saw: the Host header and, over TLS, the client certificate's name. */
const echo = (req: http.IncomingMessage, res: http.ServerResponse) => {
  const peer = (req.socket as TLSSocket).getPeerCertificate?.();
  res.writeHead(200, { 'content-type': 'text/plain' }).end(`host=${req.headers.host} client=${peer?.subject?.CN ?? '-'}`);
};

const listen = async (server: http.Server | https.Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
};

describe('fetch routes: proxies and TLS options per site', () => {
  let dir: string;
  let ca: TestCa;
  let plain: http.Server;
  let secure: https.Server;
  let plainPort: number;
  let securePort: number;
  let proxy: ForwardProxy;
  let fetcher: HttpFetcher;
  const get = (url: string, route = routes({}).forUrl(url)) =>
    fetcher.get(url, { address: '127.0.0.1', maxBytes: 10_000, wantBody: () => true, route }).then((r) => r.body!.toString());

  beforeAll(async () => {
    dir = tempDir('fetch-routes-');
    ca = makeTestCa(dir, 'site');
    const server = ca.issue('secure.test');
    // Asks for a client certificate and takes one signed by the CA; serves those without one too.
    secure = https.createServer({ cert: server.cert, key: server.key, ca: ca.cert, requestCert: true, rejectUnauthorized: false }, echo);
    plain = http.createServer(echo);
    [securePort, plainPort] = [await listen(secure), await listen(plain)];
    proxy = await ForwardProxy.start({ credentials: 'crawler:pr0xy-s3cret' });
    writeFileSync(join(dir, 'proxy-credentials'), 'crawler:pr0xy-s3cret\n');
  });

  beforeEach(() => (fetcher = new HttpFetcher(SETTINGS)));
  afterEach(() => fetcher.close());

  afterAll(async () => {
    await Promise.all([closeServer(plain), closeServer(secure as unknown as http.Server), proxy.close()]);
    removeTempDirs();
  });

  it('refuses a self-signed site by default, trusts it with its caFile or with insecureSkipVerify, and presents a client certificate', async () => {
    const url = `https://secure.test:${securePort}/`;
    const refused = await get(url).catch((error) => error);
    expect(classifyFetchError(refused)).toBe('tls');
    // The server sends the CA with its certificate: an unknown root, in the chain.
    expect(refused.code).toBe('SELF_SIGNED_CERT_IN_CHAIN');

    expect(await get(url, routes({ 'secure.test': { tls: { caFile: ca.certFile } } }).forUrl(url))).toBe(`host=secure.test:${securePort} client=-`);
    const insecure = routes({ '*.test': { tls: { insecureSkipVerify: true } } });
    expect(insecure.insecureSites).toEqual(['*.test']);
    expect(await get(url, insecure.forUrl(url))).toMatch(/^host=secure\.test/);
    // The site's options are the site's: another host keeps the default checks.
    expect(routes({ 'other.test': { tls: { insecureSkipVerify: true } } }).forUrl(url)).toEqual({});

    const client = ca.issue('crawler-client', { client: true });
    const mutual = routes({ 'secure.test': { tls: { caFile: ca.certFile, clientCertFile: client.certFile, clientKeyFile: client.keyFile } } });
    expect(await get(url, mutual.forUrl(url))).toBe(`host=secure.test:${securePort} client=crawler-client`);
  });

  it('tunnels http and https through the proxy to the vetted address, never the name, with the credentials', async () => {
    proxy.tunnels.length = 0;
    const through = routes(
      { 'secure.test': { tls: { caFile: ca.certFile } }, 'direct.test': { proxy: 'none' } },
      { 'downloader.proxyUrl': proxy.url, 'downloader.proxyCredentialsFile': join(dir, 'proxy-credentials') },
      {},
    );
    expect(await get(`http://plain.test:${plainPort}/`, through.forUrl(`http://plain.test:${plainPort}/`))).toBe(`host=plain.test:${plainPort} client=-`);
    // TLS goes end to end through the tunnel: the site's certificate is checked against its name, with its caFile.
    const secureUrl = `https://secure.test:${securePort}/`;
    expect(await get(secureUrl, through.forUrl(secureUrl))).toBe(`host=secure.test:${securePort} client=-`);
    expect(await get(`http://direct.test:${plainPort}/`, through.forUrl(`http://direct.test:${plainPort}/`))).toMatch(/^host=direct\.test/);
    expect(proxy.tunnels.map(({ target, credentials, status }) => ({ target, credentials, status }))).toEqual([
      { target: `127.0.0.1:${plainPort}`, credentials: 'crawler:pr0xy-s3cret', status: 200 },
      { target: `127.0.0.1:${securePort}`, credentials: 'crawler:pr0xy-s3cret', status: 200 },
    ]);
    expect(proxy.tunnels.every((t) => t.up > 0 && t.down > 0)).toBe(true);
  });

  it("says the proxy refused, naming it without its credentials, and the site's own proxy with credentials from a variable or a file", async () => {
    const wrong = routes({}, { 'downloader.proxyUrl': `http://crawler:wrong-s3cret@127.0.0.1:${proxy.port}` });
    const url = `http://plain.test:${plainPort}/`;
    const refused = await get(url, wrong.forUrl(url)).catch((error) => error);
    expect(classifyFetchError(refused)).toBe('proxy');
    expect(refused.message).toBe(`proxy ${proxy.url} answered 407 Proxy Authentication Required to CONNECT 127.0.0.1:${plainPort}`);
    expect(JSON.stringify(refused, Object.getOwnPropertyNames(refused))).not.toContain('s3cret');

    const site = routes(
      { 'plain.test': { proxy: { url: proxy.url, credentialsEnv: 'SITE_PROXY' } } },
      { 'downloader.proxyUrl': 'http://127.0.0.1:9' },
      { SITE_PROXY: 'crawler:pr0xy-s3cret' },
    );
    expect(await get(url, site.forUrl(url))).toMatch(/^host=plain\.test/);
    const fromFile = routes({ 'plain.test': { proxy: { url: proxy.url, credentialsFile: join(dir, 'proxy-credentials') } } });
    expect(await get(url, fromFile.forUrl(url))).toMatch(/^host=plain\.test/);
  });

  it('stops at start, naming the site and field, when a credential or a certificate file cannot be had; never showing what was read', () => {
    writeFileSync(join(dir, 'not-pem'), 'crawler:pr0xy-s3cret\n');
    writeFileSync(join(dir, 'bad-credentials'), 'just-a-token-s3cret\n');
    const problems = (() => {
      try {
        routes(
          {
            'a.test': { proxy: { url: 'http://127.0.0.1:3128', credentialsEnv: 'UNSET_PROXY_CREDENTIALS' } },
            'b.test': { proxy: { url: 'http://127.0.0.1:3128', credentialsFile: join(dir, 'bad-credentials') } },
            'c.test': { tls: { caFile: join(dir, 'missing.pem') } },
            'd.test': { tls: { caFile: join(dir, 'not-pem') } },
          },
          { 'downloader.proxyUrl': 'http://127.0.0.1:3128', 'downloader.proxyCredentialsFile': join(dir, 'no-such-secret') },
        );
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
      return [];
    })();
    expect(problems).toEqual([
      `DOWNLOADER_PROXY_URL: cannot read the proxy credentials: DOWNLOADER_PROXY_CREDENTIALS_FILE ${join(dir, 'no-such-secret')} ENOENT`,
      'SITE_SETTINGS_FILE: sites."a.test".proxy: cannot read the proxy credentials: variable UNSET_PROXY_CREDENTIALS is not set',
      `SITE_SETTINGS_FILE: sites."b.test".proxy: the proxy credentials in file ${join(dir, 'bad-credentials')} are not user:password on one line`,
      `SITE_SETTINGS_FILE: sites."c.test".tls: caFile: cannot read ${join(dir, 'missing.pem')}: ENOENT`,
      `SITE_SETTINGS_FILE: sites."d.test".tls: caFile: ${join(dir, 'not-pem')} holds no PEM certificate`,
    ]);
    expect(problems.join('\n')).not.toContain('s3cret');
  });
});
