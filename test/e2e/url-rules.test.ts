import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { runCrawlCli } from '../support/run-crawl-cli';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { crawlTestWeb, IN_MEMORY_TEST_ENV } from '../support/test-web-crawl';

const DOC = readFileSync(join(__dirname, '../../docs/crawl-config.md'), 'utf8');

/** The fenced block after `<!-- example:NAME -->` in docs/crawl-config.md. */
function example(name: string): string {
  const at = DOC.indexOf(`<!-- example:${name} -->`);
  if (at < 0) throw new Error(`docs/crawl-config.md has no example ${name}`);
  const block = /```\w*\n([\s\S]*?)```/.exec(DOC.slice(at))!;
  return block[1];
}

/** The arguments of an `npm run crawl -- …` line, split as a shell splits them (single quotes only). */
function crawlArgs(command: string): string[] {
  const args = [...command.trim().matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
  return args.slice(args.indexOf('--') + 1);
}

/** docs.example.com as the example pictures it: each page links to the next ones. */
const SITE: Record<string, string[]> = {
  '/docs/': ['/docs/intro', '/docs/guide/setup', '/docs/api/v1', '/docs/list?sort=name', '/docs/list', '/blog/news', '/about'],
  '/docs/intro': ['/pricing'],
  '/docs/guide/setup': ['/docs/api/v2'],
  '/docs/list': ['/contact'],
};
const NEVER = ['/docs/api/v1', '/docs/api/v2', '/docs/list?sort=name', '/blog/news', '/about', '/pricing', '/contact'];

afterAll(removeTempDirs);

/**
 * The example "a docs-site crawl with include/exclude rules" of docs/crawl-config.md, run as written (the seed
 * pointed at a local copy of the site), once with the rules file and once with the flags: only the pages the
 * rules allow are fetched, and the summary counts the rest by rule.
 */
describe('embedded crawl with user URL rules (docs/crawl-config.md, a docs-site crawl)', () => {
  let server: Server;
  let port: number;
  const requested: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      requested.push(req.url!);
      const path = req.url!;
      const links = SITE[path] ?? (path === '/robots.txt' || path === '/sitemap.xml' ? undefined : []);
      if (!links) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>${path}</title><p>Page ${path}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}`);
    });
    port = await listenOnLoopback(server);
  });

  afterAll(() => closeServer(server));

  const crawl = async (command: string, dir: string) => {
    requested.length = 0;
    const args = crawlArgs(command).map((a) => (a === 'https://docs.example.com/docs/' ? `http://docs.example.com:${port}/docs/` : a));
    return crawlTestWeb({ hostsFile: () => '127.0.0.1 docs.example.com\n' }, dir, { args, delaySeconds: 0.05, timeoutMs: 60_000 });
  };

  const expectOnlyAllowedPages = (summary: Record<string, any>) => {
    const pages = requested.filter((p) => p !== '/robots.txt' && p !== '/sitemap.xml');
    expect(pages.sort()).toEqual(['/docs/', '/docs/guide/setup', '/docs/intro', '/docs/list']);
    for (const path of NEVER) expect(requested).not.toContain(path);
    expect(summary.totals).toMatchObject({ 'filtered.excluded': 3, 'filtered.not-included': 4 });
  };

  it('fetches only what the rules file allows', async () => {
    const dir = tempDir('url-rules-file-');
    writeFileSync(join(dir, 'docs-rules.txt'), example('docs-site-rules'));
    const command = example('docs-site-crawl').replace('docs-rules.txt', join(dir, 'docs-rules.txt'));
    expectOnlyAllowedPages(await crawl(command, dir));
  }, 90_000);

  it('fetches only what the --include and --exclude flags allow', async () => {
    expectOnlyAllowedPages(await crawl(example('docs-site-flags'), tempDir('url-rules-flags-')));
  }, 90_000);

  it('stops before crawling on a rule that could backtrack catastrophically, naming the flag and the position', async () => {
    requested.length = 0;
    const outcome = await runCrawlCli(['http://docs.example.com/', '--exclude', '/ok/**', '--exclude', 'path-re:^/(\\w+/)+$', '--out', tempDir('url-rules-bad-')], {
      env: { ...process.env, ...IN_MEMORY_TEST_ENV },
      timeoutMs: 50_000,
    });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('URL_FILTER_EXCLUDE (--exclude) rule 2: "path-re:^/(\\\\w+/)+$": refused: a repeated group that itself repeats');
    expect(requested).toEqual([]);
  }, 60_000);
});
