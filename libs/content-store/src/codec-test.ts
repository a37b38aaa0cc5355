import zlib from 'node:zlib';
import { type Codec, ZSTD_NODE_VERSION, zstdBuiltIn } from './codec';

/**
 * `describe` for a codec's tests: zstd's are skipped, saying why, on a Node.js without it (the Node 20 of a
 * fresh development machine), gzip's always run.
 */
export function describeCodec(codec: Codec, name: string, tests: () => void): void {
  if (codec === 'gzip' || zstdBuiltIn()) describe(name, tests);
  else describe.skip(`${name} (skipped: zstd needs Node.js ${ZSTD_NODE_VERSION} or later, this is ${process.version})`, tests);
}

export const CODECS: readonly Codec[] = ['gzip', 'zstd'];

/**
 * Runs `test` as on a Node.js without zstd (20): where zlib has it, `zstdCompressSync` is taken away for the
 * call and put back after.
 */
export async function withoutZstd<T>(test: () => T | Promise<T>): Promise<T> {
  const zstd = zlib as { zstdCompressSync?: unknown };
  const built = zstd.zstdCompressSync;
  zstd.zstdCompressSync = undefined;
  try {
    return await test();
  } finally {
    zstd.zstdCompressSync = built;
  }
}
