import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForwardProxy } from '../support/forward-proxy';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { runCrawlCli } from '../support/run-crawl-cli';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { makeTestCa, TestCa } from '../support/test-certificates';

const DOC = readFileSync(join(__dirname, '../../docs/crawl-config.md'), 'utf8');

/** The fenced block after `<!-- example:NAME -->` in docs/crawl-config.md. */
function example(name: string): string {
  const at = DOC.indexOf(`<!-- example:${name} -->`);
  if (at < 0) throw new Error(`docs/crawl-config.md has no example ${name}`);
  return /```\w*\n([\s\S]*?)```/.exec(DOC.slice(at))![1];
}

/** The example's shell lines: its `export NAME=VALUE` lines as variables, and the arguments after `npm run crawl --`. */
function shellExample(text: string): { env: Record<string, string>; args: string[] } {
  const env: Record<string, string> = {};
  let args: string[] = [];
  for (const line of text.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim())) {
    const exported = /^export ([A-Z_][A-Z0-9_]*)=(\S+)$/.exec(line);
    if (exported) env[exported[1]] = exported[2];
    else if (line.startsWith('npm run crawl --')) args = line.slice('npm run crawl --'.length).trim().split(/\s+/);
  }
  return { env, args };
}

const SECRETS = ['crawler:main-secret', 'crawler:partner-secret'];

/**
 * "A crawl behind a proxy" of docs/crawl-config.md, run as written: the proxies are forward proxies on loopback
 * (test/support/forward-proxy.ts) counting their tunnels, the sites HTTPS servers on loopback with certificates of
 * two throwaway CAs, the "public" one trusted as a public CA would be (NODE_EXTRA_CA_CERTS), the company's only
 * through the site's caFile. The example's addresses, files and seeds are pointed at them; nothing else changes.
 */
describe('a crawl behind a proxy (docs/crawl-config.md), with per-site TLS options', () => {
  let dir: string;
  let publicCa: TestCa;
  let corpCa: TestCa;
  let publicSite: https.Server;
  let corpSite: https.Server;
  let publicPort: number;
  let corpPort: number;
  let proxy: ForwardProxy;
  let partnerProxy: ForwardProxy;
  /** Each request a site heard, and the port its connection came from (a proxy's tunnel's, or the crawler's own). */
  const heard: { site: string; host: string; path: string; from?: number }[] = [];

  const serve = (site: string) => (req: IncomingMessage, res: ServerResponse) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    heard.push({ site, host, path: req.url ?? '', from: req.socket.remotePort });
    if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    if (req.url !== '/' && req.url !== '/a') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>${host}${req.url}</title><a href="/a">a</a>`);
  };

  beforeAll(async () => {
    dir = tempDir('proxy-tls-');
    publicCa = makeTestCa(dir, 'public');
    corpCa = makeTestCa(dir, 'corp');
    const publicCert = publicCa.issue('www.example.com', { hosts: ['www.example.com', 'docs.partner.example'] });
    const corpCert = corpCa.issue('wiki.corp.example');
    publicSite = https.createServer({ cert: publicCert.cert, key: publicCert.key }, serve('public'));
    corpSite = https.createServer({ cert: corpCert.cert, key: corpCert.key }, serve('corp'));
    publicPort = await listenOnLoopback(publicSite);
    corpPort = await listenOnLoopback(corpSite);
    proxy = await ForwardProxy.start({ credentials: 'crawler:main-secret' });
    partnerProxy = await ForwardProxy.start({ credentials: 'crawler:partner-secret' });
    writeFileSync(join(dir, 'proxy-secret'), 'crawler:main-secret\n');
  });

  afterAll(async () => {
    await Promise.all([closeServer(publicSite), closeServer(corpSite), proxy.close(), partnerProxy.close()]);
    removeTempDirs();
  });

  /** The example pointed at this test's servers, with `sites` (the example's file, or a variant of it). */
  const crawl = async (name: string, sites: string, extraEnv: Record<string, string> = {}) => {
    heard.length = 0;
    proxy.tunnels.length = 0;
    partnerProxy.tunnels.length = 0;
    const out = join(dir, name);
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, sites.replace('http://proxy.partner.example:8080', partnerProxy.url).replace('/etc/crawler/corp-ca.pem', corpCa.certFile));
    const { env, args } = shellExample(example('proxy-crawl'));
    const seeds: Record<string, string> = {
      'https://www.example.com/': `https://www.example.com:${publicPort}/`,
      'https://docs.partner.example/': `https://docs.partner.example:${publicPort}/`,
      'https://wiki.corp.example/': `https://wiki.corp.example:${corpPort}/`,
    };
    const localArgs = args.map((a) => seeds[a] ?? (a === 'http://proxy.example:3128' ? proxy.url : a === 'sites.yaml' ? file : a));
    const resolve = ['www.example.com', 'docs.partner.example', 'wiki.corp.example'].flatMap((h) => ['--resolve', `${h}=127.0.0.1`]);
    // A host that resolves to a private address: refused before any proxy is asked, as without one.
    const refused = ['--resolve', 'intranet.example=10.20.30.40', 'https://intranet.example/'];
    const result = await runCrawlCli([...localArgs, ...refused, ...resolve, '--out', out, '--json', '--sitemaps', 'off', '--delay', '0.1'], {
      env: {
        ...process.env,
        ...env,
        DOWNLOADER_PROXY_CREDENTIALS_FILE: join(dir, 'proxy-secret'),
        REDIS_URL: '',
        S3_URL: '',
        FRONTIER_PER_IP_INTERVAL_MS: '0',
        // The test's sites are on loopback: allowed by name, as an operator would; 10.20.30.40 stays refused.
        DNS_ALLOW_CIDRS: '127.0.0.0/8',
        CRAWL_ROBOTS_IDLE_WAIT_MS: '1000',
        NODE_EXTRA_CA_CERTS: publicCa.certFile,
        ...extraEnv,
      },
      timeoutMs: 90_000,
    });
    const written = (existsSync(out) ? readdirSync(out, { recursive: true, encoding: 'utf8' }) : [])
      .filter((f) => /\.(log|jsonl|json)$/.test(f))
      .map((f) => readFileSync(join(out, f), 'utf8'))
      .join('\n');
    return { ...result, written };
  };

  const pages = (host: string) =>
    heard
      .filter((h) => h.host === host)
      .map((h) => h.path)
      .sort();

  it('crawls the worked example: the crawl through its proxy, the partner through theirs, the intranet straight there with its CA', async () => {
    const { code, stdout, stderr, written } = await crawl('example', example('proxy-sites'));
    expect({ code, stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    for (const host of ['www.example.com', 'docs.partner.example', 'wiki.corp.example']) expect(pages(host)).toEqual(['/', '/a', '/robots.txt']);

    // Each proxy tunnelled to the vetted address, never a name, with its own credentials; the intranet went straight there.
    const tunnels = (p: ForwardProxy) => new Set(p.tunnels.map((t) => `${t.status} ${t.target} ${t.credentials}`));
    expect(tunnels(proxy)).toEqual(new Set([`200 127.0.0.1:${publicPort} crawler:main-secret`]));
    expect(tunnels(partnerProxy)).toEqual(new Set([`200 127.0.0.1:${publicPort} crawler:partner-secret`]));
    // Every request, robots.txt's too, came through its site's proxy; the intranet's through none.
    const via = (host: string) =>
      new Set(heard.filter((h) => h.host === host).map((h) => (proxy.carried(h.from) ? 'proxy' : partnerProxy.carried(h.from) ? 'partner' : 'direct')));
    expect(via('www.example.com')).toEqual(new Set(['proxy']));
    expect(via('docs.partner.example')).toEqual(new Set(['partner']));
    expect(via('wiki.corp.example')).toEqual(new Set(['direct']));

    // The refused host: no proxy was asked for it; the summary says why it was not crawled.
    const summary = JSON.parse(stdout);
    expect(summary.pagesFetched).toBe(6);
    expect(JSON.stringify(summary)).toContain('intranet.example');

    // No credential anywhere: terminal, summary, crawl.log, fetch log.
    const everything = [stdout, stderr, written].join('\n');
    for (const secret of SECRETS) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(Buffer.from(secret).toString('base64'));
    }
  }, 120_000);

  it('without the caFile the intranet fails with a TLS error; with insecureSkipVerify it is crawled, and the crawl warns', async () => {
    const sites = example('proxy-sites');
    const withoutCa = await crawl('without-ca', sites.replace(/\n\s+tls:\n\s+caFile: .*\n/, '\n'));
    expect(pages('wiki.corp.example')).toEqual([]);
    // Its robots.txt could not be had: the host is set aside, and the summary says why.
    expect(withoutCa.stdout).toMatch(/wiki\.corp\.example:\d+ \(robots\.txt unreachable [^)]*TLS failed \(unable to verify the first certificate\)/);
    expect(pages('www.example.com')).toEqual(['/', '/a', '/robots.txt']);

    const insecure = await crawl('insecure', sites.replace(/caFile: .*/, 'insecureSkipVerify: true'));
    expect(insecure.code).toBe(0);
    expect(pages('wiki.corp.example')).toEqual(['/', '/a', '/robots.txt']);
    expect(insecure.stderr).toContain('crawl: WARNING: TLS CERTIFICATES ARE NOT CHECKED for "*.corp.example"');
    expect(insecure.written).toContain('TLS CERTIFICATES ARE NOT CHECKED for \\"*.corp.example\\"');
  }, 180_000);

  it('refuses a bad settings file or a missing credential before crawling, naming each, showing no secret', async () => {
    const bad = [
      'sites:',
      '  docs.partner.example:',
      '    proxy: http://crawler:partner-secret@proxy.partner.example:8080',
      '  "*.corp.example":',
      '    tls: {clientCertFile: /etc/crawler/client.pem}',
      '  staging.corp.example:',
      '    tls: {insecureSkipVerify: "yes"}',
    ].join('\n');
    const refused = await crawl('bad-file', bad);
    expect(refused.code).toBe(2);
    const file = join(dir, 'bad-file.yaml');
    expect(refused.stderr).toContain(`${file}:3:12: sites."docs.partner.example".proxy: may not hold credentials: name them with credentialsEnv or credentialsFile`);
    expect(refused.stderr).toContain(`${file}:5:10: sites."*.corp.example".tls: clientCertFile and clientKeyFile go together`);
    expect(refused.stderr).toContain(`${file}:7:31: sites."staging.corp.example".tls.insecureSkipVerify: Invalid input: expected boolean, received string`);
    expect(refused.stderr).not.toContain('partner-secret');

    const unset = await crawl('unset', example('proxy-sites'), { PARTNER_PROXY_CREDENTIALS: '' });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain(
      `SITE_SETTINGS_FILE: ${join(dir, 'unset.yaml')}:10:3: sites."docs.partner.example".proxy: cannot read the proxy credentials: variable PARTNER_PROXY_CREDENTIALS is not set`,
    );
    expect(heard).toEqual([]);
  }, 60_000);
});
