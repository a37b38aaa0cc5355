import { loadConfig } from '@crawler/config';
import { FetchedPage, SCHEMA_VERSION } from '@crawler/contracts';
import { ContentParserService } from './content-parser.service';
import { ParseThreads } from './parse-threads';

// The threads run the compiled worker (dist/, built by `npm test`'s pretest).
const fetched = (url: string): FetchedPage => ({
  v: SCHEMA_VERSION,
  fetchId: 'f1',
  url,
  depth: 1,
  status: 200,
  headers: { 'content-type': 'text/html; charset=windows-1251', 'x-robots-tag': 'nofollow' },
  contentType: 'text/html; charset=windows-1251',
  bodyKey: 'staging/x',
  length: 0,
  truncated: false,
  fetchedAt: '2024-01-01T00:00:00.000Z',
});
const page = (i: number) =>
  Buffer.from(`<html lang="ru"><title>Page ${i}</title><base href="/b/"><a href="/x/${i}">x</a><p>text ${i} ${'word '.repeat(i)}</p></html>`, 'latin1');

describe('ContentParserService on worker threads', () => {
  it('parses exactly as it does on the event loop', async () => {
    const inline = new ContentParserService(loadConfig({}, {}));
    const threaded = new ContentParserService(loadConfig({}, { 'parser.threads': 2 }));
    try {
      const urls = Array.from({ length: 20 }, (_, i) => `http://a.test/${i}`);
      const results = await Promise.all(urls.map((url, i) => threaded.parseAsync(fetched(url), page(i))));
      expect(results).toEqual(urls.map((url, i) => inline.parse(fetched(url), page(i))));
      expect(await threaded.parseAsync(fetched('http://a.test/empty'), Buffer.alloc(0))).toEqual({ ok: false, reason: 'empty' });
    } finally {
      await threaded.onApplicationShutdown();
    }
  });

  it('fails the pages of a thread that dies, and goes on with a new one', async () => {
    const threads = new ParseThreads(1, { maxLinks: 10, images: false, botName: 'test-bot' });
    try {
      // A page big enough to be still parsing when the thread is killed.
      const pending = threads.parse(fetched('http://a.test/1'), Buffer.from(`<p>${'many words here '.repeat(400_000)}</p>`));
      await (threads as unknown as { pool: { threads: { worker: { terminate(): Promise<number> } }[] } }).pool.threads[0].worker.terminate();
      await expect(pending).rejects.toThrow(/parse thread exited/);
      await expect(threads.parse(fetched('http://a.test/2'), page(2))).resolves.toMatchObject({ ok: true, page: { title: 'Page 2' } });
    } finally {
      await threads.close();
    }
  });
});
