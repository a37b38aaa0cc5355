import { codecOfKey, compressAsync, compressSync, decompressSync, extensionOf, resolveCodec, zstdBuiltIn } from './codec';
import { CODECS, describeCodec, withoutZstd } from './codec-test';

const page = Buffer.from('<html><p>a page, said twice. a page, said twice.</p></html>'.repeat(50));

describe('codec', () => {
  it('names an object by its codec, and reads the codec back from the name', () => {
    expect(CODECS.map(extensionOf)).toEqual(['.gz', '.zst']);
    expect(codecOfKey('pages/2026-01-01/a-0.gz')).toBe('gzip');
    expect(codecOfKey('staging/a-0.zst')).toBe('zstd');
    expect(() => codecOfKey('pages/2026-01-01/a-0.index.jsonl')).toThrow(/neither \.gz nor \.zst/);
  });

  it('takes auto for zstd where Node.js has it built in, gzip elsewhere, and a named codec as it is', () => {
    expect(resolveCodec('auto')).toBe(zstdBuiltIn() ? 'zstd' : 'gzip');
    expect(resolveCodec('gzip')).toBe('gzip');
    expect(resolveCodec('zstd')).toBe('zstd');
  });

  it('has zstd on Node.js 22.15 and later (23.8 on the odd line), not on Node 20', () => {
    const [major, minor] = process.versions.node.split('.').map(Number);
    expect(zstdBuiltIn()).toBe(major >= 24 || (major === 23 && minor >= 8) || (major === 22 && minor >= 15));
  });

  for (const codec of CODECS) {
    describeCodec(codec, `${codec}`, () => {
      it('gives back what it compressed, synchronously or not, at its lowest and highest level', async () => {
        for (const level of codec === 'gzip' ? [1, 9] : [1, 19]) {
          expect(decompressSync(compressSync(page, { codec, level }), codec).equals(page)).toBe(true);
          expect(decompressSync(await compressAsync(page, { codec, level }), codec).equals(page)).toBe(true);
        }
      });

      it('reads bodies compressed one by one and put back to back as one (the segment and bundle files)', () => {
        const parts = [page, Buffer.from('second'), Buffer.alloc(0), Buffer.from('last')];
        const file = Buffer.concat(parts.map((part) => compressSync(part, { codec, level: 3 })));
        expect(decompressSync(file, codec).equals(Buffer.concat(parts))).toBe(true);
      });
    });
  }

  it('refuses zstd on a Node.js without it, naming the Node.js it needs (taken away for the test where it is built in)', () =>
    withoutZstd(() => {
      expect(resolveCodec('auto')).toBe('gzip');
      expect(() => compressSync(page, { codec: 'zstd', level: 3 })).toThrow(/^zstd needs Node\.js 22\.15 or later, this is v\d+/);
      expect(() => decompressSync(page, 'zstd')).toThrow(/zstd needs Node\.js 22\.15 or later/);
    }));
});
