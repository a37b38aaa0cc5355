import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { GzipThreads } from './gzip-threads';

describe('GzipThreads', () => {
  const threads = new GzipThreads(2, 6);
  afterAll(() => threads.close());

  it('gzips on its threads what gunzip gives back, small, large and many at once, on every supported Node.js', async () => {
    const bodies = [
      Buffer.from('x'),
      Buffer.from('<p>a page</p>'.repeat(10_000)),
      randomBytes(300_000),
      ...Array.from({ length: 20 }, (_, i) => Buffer.from(`page ${i}`.repeat(i * 50))),
    ];
    const gzipped = await Promise.all(bodies.map((body) => threads.gzip(body)));
    gzipped.forEach((zipped, i) => expect(gunzipSync(zipped).equals(bodies[i])).toBe(true));
  });

  it('hands back buffers of their own size, with no slack from the compressor behind them', async () => {
    const zipped = await threads.gzip(Buffer.from('hello'));
    expect(zipped.buffer.byteLength).toBe(zipped.length);
  });
});
