/**
 * PNG structure checks (ISO/IEC 15948, the PNG specification): the 8-byte signature, an IHDR chunk first with
 * a valid CRC and sane fields, then every chunk whole and CRC-correct up to IEND, with image data (and a
 * palette for an indexed image). Nothing is decompressed: the pixels are not needed to know the image's
 * dimensions, and a crawler must not inflate untrusted data just to reject it.
 */

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Why a file is not a PNG we keep; each is counted as `plugin.png.rejected.<reason>`. */
export type PngRejection =
  | 'empty'
  | 'too-large'
  | 'bad-signature'
  | 'truncated'
  | 'no-ihdr'
  | 'bad-ihdr-crc'
  | 'bad-dimensions'
  | 'bad-bit-depth'
  | 'bad-ihdr'
  | 'bad-chunk'
  | 'bad-chunk-crc'
  | 'no-palette'
  | 'no-image-data'
  | 'too-many-pixels';

/** PNG colour types (IHDR byte 9). */
export const COLOR_TYPES: Record<number, string> = { 0: 'grayscale', 2: 'truecolor', 3: 'indexed', 4: 'grayscale-alpha', 6: 'truecolor-alpha' };
/** The bit depths each colour type allows. */
const BIT_DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

export interface PngInfo {
  width: number;
  height: number;
  bitDepth: number;
  /** 0 grayscale, 2 truecolor, 3 indexed, 4 grayscale + alpha, 6 truecolor + alpha. */
  colorType: number;
  interlaced: boolean;
  /** Number of chunks, IHDR and IEND included. */
  chunks: number;
}

export type PngCheck = ({ ok: true } & PngInfo) | { ok: false; reason: PngRejection; detail: string };

export interface PngCheckOptions {
  /** width × height above this is refused (a decompression bomb waiting for whoever decodes it). @defaultValue no limit */
  maxPixels?: number;
}

const MAX_DIMENSION = 2 ** 31 - 1;

export function inspectPng(bytes: Buffer, options: PngCheckOptions = {}): PngCheck {
  const reject = (reason: PngRejection, detail: string): PngCheck => ({ ok: false, reason, detail });
  if (bytes.length === 0) return reject('empty', 'no bytes');
  const head = bytes.subarray(0, PNG_SIGNATURE.length);
  if (!PNG_SIGNATURE.subarray(0, head.length).equals(head) || head.length < PNG_SIGNATURE.length) {
    return PNG_SIGNATURE.subarray(0, head.length).equals(head)
      ? reject('truncated', `${bytes.length} bytes: the signature is cut short`)
      : reject('bad-signature', `starts with ${head.toString('hex')}, not the PNG signature`);
  }
  let offset = PNG_SIGNATURE.length;
  let chunks = 0;
  let info: PngInfo | undefined;
  let palette = false;
  let imageData = false;
  for (;;) {
    if (offset + 8 > bytes.length) return reject('truncated', `ends at byte ${bytes.length} before ${info ? 'IEND' : 'IHDR'}`);
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    if (!/^[A-Za-z]{4}$/.test(type) || length > MAX_DIMENSION) {
      return info
        ? reject('bad-chunk', `chunk ${chunks + 1} at byte ${offset}: type ${JSON.stringify(type)}, length ${length}`)
        : reject('no-ihdr', 'no IHDR chunk where the first chunk belongs');
    }
    if (!info && (type !== 'IHDR' || length !== 13)) return reject('no-ihdr', `the first chunk is ${type} (${length} bytes), not a 13-byte IHDR`);
    const end = offset + 8 + length + 4;
    if (end > bytes.length) return reject('truncated', `chunk ${type} at byte ${offset} needs ${end} bytes, the file has ${bytes.length}`);
    const stored = bytes.readUInt32BE(offset + 8 + length);
    const computed = crc32(bytes.subarray(offset + 4, offset + 8 + length));
    if (stored !== computed) {
      return type === 'IHDR'
        ? reject('bad-ihdr-crc', `IHDR CRC is ${hex(stored)}, its bytes give ${hex(computed)}`)
        : reject('bad-chunk-crc', `chunk ${type} at byte ${offset}: CRC ${hex(stored)}, bytes give ${hex(computed)}`);
    }
    chunks++;
    const data = bytes.subarray(offset + 8, offset + 8 + length);
    if (!info) {
      const header = readHeader(data);
      if ('reason' in header) return reject(header.reason, header.detail);
      if (options.maxPixels !== undefined && header.width * header.height > options.maxPixels) {
        return reject('too-many-pixels', `${header.width}×${header.height} is more than ${options.maxPixels} pixels`);
      }
      info = { ...header, chunks: 0 };
    } else if (type === 'PLTE') palette = true;
    else if (type === 'IDAT') {
      if (info.colorType === 3 && !palette) return reject('no-palette', 'an indexed image has image data before any PLTE');
      imageData = true;
    } else if (type === 'IEND') {
      if (!imageData) return reject('no-image-data', 'IEND without any IDAT');
      return { ok: true, ...info, chunks };
    }
    offset = end;
  }
}

function readHeader(data: Buffer): Omit<PngInfo, 'chunks'> | { reason: PngRejection; detail: string } {
  const width = data.readUInt32BE(0);
  const height = data.readUInt32BE(4);
  const [bitDepth, colorType, compression, filter, interlace] = [data[8], data[9], data[10], data[11], data[12]];
  if (width === 0 || height === 0 || width > MAX_DIMENSION || height > MAX_DIMENSION) {
    return { reason: 'bad-dimensions', detail: `${width}×${height}: each must be 1 … 2^31-1` };
  }
  if (!BIT_DEPTHS[colorType]?.includes(bitDepth)) {
    return { reason: 'bad-bit-depth', detail: `colour type ${colorType} with bit depth ${bitDepth} is not a PNG combination` };
  }
  if (compression !== 0 || filter !== 0 || interlace > 1) {
    return { reason: 'bad-ihdr', detail: `compression ${compression}, filter ${filter}, interlace ${interlace}: only 0, 0 and 0/1 exist` };
  }
  return { width, height, bitDepth, colorType, interlaced: interlace === 1 };
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 as PNG computes it (ISO 3309 / ITU-T V.42), over a chunk's type and data. */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const hex = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;
