/**
 * Tiny PNG encoder for the test web's images (ISO/IEC 15948): signature, IHDR, PLTE for indexed images,
 * one zlib IDAT of unfiltered scanlines, IEND. Written here on its own, not shared with the crawler's PNG
 * checks, so that the two can catch each other's mistakes.
 */
import { deflateSync } from 'node:zlib';

export interface PngSpec {
  width: number;
  height: number;
  bitDepth: number;
  /** 0 grayscale, 2 truecolor, 3 indexed, 4 grayscale + alpha, 6 truecolor + alpha. */
  colorType: number;
  /** Varies the pixels, so images of one size differ. */
  shade?: number;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

const TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc(bytes: Buffer): number {
  let c = ~0;
  for (const b of bytes) c = TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  typed.copy(out, 4);
  out.writeUInt32BE(crc(typed), 8 + data.length);
  return out;
}

export function encodePng(spec: PngSpec): Buffer {
  const { width, height, bitDepth, colorType, shade = 0 } = spec;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([bitDepth, colorType, 0, 0, 0], 8);
  const rowBytes = Math.ceil((width * CHANNELS[colorType] * bitDepth) / 8);
  const raw = Buffer.alloc((rowBytes + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (rowBytes + 1)] = 0; // filter type None
    for (let x = 0; x < rowBytes; x++) raw[y * (rowBytes + 1) + 1 + x] = (x * 7 + y * 13 + shade) & 0xff;
  }
  const palette = colorType === 3 ? [chunk('PLTE', Buffer.from(Array.from({ length: 3 * 16 }, (_, i) => (i * 16 + shade) & 0xff)))] : [];
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), ...palette, chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/** A PNG whose IHDR CRC does not match its bytes (a bit of the stored CRC flipped). */
export function withBadIhdrCrc(png: Buffer): Buffer {
  const copy = Buffer.from(png);
  copy[8 + 8 + 13 + 3] ^= 0x01;
  return copy;
}
