import { randomBytes } from 'node:crypto';
import { decompressSync } from './codec';
import { CODECS, describeCodec } from './codec-test';
import { CompressionThreads } from './compression-threads';

for (const codec of CODECS) {
  describeCodec(codec, `CompressionThreads, ${codec}`, () => {
    let threads: CompressionThreads;
    beforeAll(() => {
      threads = new CompressionThreads(2, { codec, level: 6 });
    });
    afterAll(() => threads.close());

    it('compresses on its threads what the codec gives back, small, large and many at once, on every supported Node.js', async () => {
      const bodies = [
        Buffer.from('x'),
        Buffer.from('<p>a page</p>'.repeat(10_000)),
        randomBytes(300_000),
        ...Array.from({ length: 20 }, (_, i) => Buffer.from(`page ${i}`.repeat(i * 50))),
      ];
      const compressed = await Promise.all(bodies.map((body) => threads.compress(body)));
      compressed.forEach((bytes, i) => expect(decompressSync(bytes, codec).equals(bodies[i])).toBe(true));
    });

    it('hands back buffers of their own size, with no slack from the compressor behind them', async () => {
      const bytes = await threads.compress(Buffer.from('hello'));
      expect(bytes.buffer.byteLength).toBe(bytes.length);
    });
  });
}
