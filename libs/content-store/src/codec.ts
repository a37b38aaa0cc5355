import { promisify } from 'node:util';
import zlib from 'node:zlib';

/** How stored pages and staged bodies are compressed. */
export type Codec = 'gzip' | 'zstd';

/** `CONTENT_CODEC`: a codec, or `auto`, zstd where this Node.js has it built in and gzip elsewhere. */
export type CodecSetting = Codec | 'auto';

/** A codec and its level: how a process compresses what it stages and stores. */
export interface Compression {
  codec: Codec;
  level: number;
}

/** One body compressed on its own (a gzip member, a zstd frame), with the codec that wrote it. */
export interface Compressed {
  codec: Codec;
  bytes: Buffer;
}

/** The first Node.js with zstd in zlib (also 23.8 on the odd line); the images run Node 24. */
export const ZSTD_NODE_VERSION = '22.15';

// @types/node 20 predates zstd, and Node 20 has none: the functions are looked up, not assumed.
const zstd = zlib as {
  zstdCompressSync?: (body: Uint8Array, options: { params: Record<number, number> }) => Buffer;
  zstdDecompressSync?: (data: Uint8Array) => Buffer;
  zstdCompress?: (body: Uint8Array, options: { params: Record<number, number> }, done: (error: Error | null, result: Buffer) => void) => void;
  constants: { ZSTD_c_compressionLevel?: number };
};

/** Whether this Node.js compresses zstd itself (no native addon is ever used for it). */
export function zstdBuiltIn(): boolean {
  return typeof zstd.zstdCompressSync === 'function';
}

/** The codec a setting means on this runtime. */
export function resolveCodec(setting: CodecSetting): Codec {
  if (setting !== 'auto') return setting;
  return zstdBuiltIn() ? 'zstd' : 'gzip';
}

const EXTENSION: Record<Codec, string> = { gzip: '.gz', zstd: '.zst' };

/** The extension of an object written by `codec`: what tells a reader (and `zcat` or `zstdcat`) how to read it. */
export function extensionOf(codec: Codec): string {
  return EXTENSION[codec];
}

/** The codec of an object by its name's extension. */
export function codecOfKey(key: string): Codec {
  if (key.endsWith('.zst')) return 'zstd';
  if (key.endsWith('.gz')) return 'gzip';
  throw new Error(`no codec writes ${JSON.stringify(key)}: neither .gz nor .zst`);
}

export function compressSync(body: Uint8Array, { codec, level }: Compression): Buffer {
  if (codec === 'gzip') return zlib.gzipSync(body, { level });
  const { compress, levelParam } = zstdFunctions();
  return compress(body, { params: { [levelParam]: level } });
}

const gzipAsync = promisify(zlib.gzip);

/** On libuv's pool (zlib's asynchronous API). */
export function compressAsync(body: Uint8Array, { codec, level }: Compression): Promise<Buffer> {
  if (codec === 'gzip') return gzipAsync(body, { level });
  const { compressAsync: compress, levelParam } = zstdFunctions();
  return promisify(compress)(body, { params: { [levelParam]: level } });
}

export function decompressSync(data: Uint8Array, codec: Codec): Buffer {
  return codec === 'gzip' ? zlib.gunzipSync(data) : zstdFunctions().decompress(data);
}

function zstdFunctions() {
  const { zstdCompressSync: compress, zstdDecompressSync: decompress, zstdCompress: compressAsync } = zstd;
  const levelParam = zstd.constants.ZSTD_c_compressionLevel;
  if (!compress || !decompress || !compressAsync || levelParam === undefined) {
    throw new Error(`zstd needs Node.js ${ZSTD_NODE_VERSION} or later, this is ${process.version}`);
  }
  return { compress, decompress, compressAsync, levelParam };
}
