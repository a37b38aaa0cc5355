import { crc32 as zlibCrc32, deflateSync } from 'node:zlib';
import { crc32, inspectPng, PNG_SIGNATURE } from './png-validator';

/** A chunk as the PNG spec lays it out: length, type, data, CRC of type + data. */
function chunk(type: string, data: Buffer, crc?: number): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc ?? crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, tail]);
}

function ihdr(width: number, height: number, bitDepth = 8, colorType = 6, extra: number[] = [0, 0, 0]): Buffer {
  const data = Buffer.alloc(13);
  data.writeUInt32BE(width, 0);
  data.writeUInt32BE(height, 4);
  data.set([bitDepth, colorType, ...extra], 8);
  return data;
}

/** A real, decodable PNG of `width` × `height` (8-bit RGBA, filter 0 on every row). */
function png(width: number, height: number, options: { bitDepth?: number; colorType?: number; ihdrCrc?: number; palette?: boolean } = {}): Buffer {
  const { bitDepth = 8, colorType = 6 } = options;
  const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[colorType] ?? 1;
  const rowBytes = Math.ceil((width * channels * bitDepth) / 8);
  const raw = Buffer.alloc((rowBytes + 1) * height, 0x55);
  for (let y = 0; y < height; y++) raw[y * (rowBytes + 1)] = 0;
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', ihdr(width, height, bitDepth, colorType), options.ihdrCrc),
    ...(options.palette ? [chunk('PLTE', Buffer.from([0, 0, 0, 255, 255, 255]))] : []),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('inspectPng', () => {
  it('computes the CRC-32 PNG uses (the check value of "123456789", and zlib’s)', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    if (typeof zlibCrc32 === 'function') expect(crc32(Buffer.from('IEND'))).toBe(zlibCrc32(Buffer.from('IEND')));
  });

  it('reads the dimensions, bit depth and colour type of a valid PNG', () => {
    expect(inspectPng(png(16, 9))).toEqual({ ok: true, width: 16, height: 9, bitDepth: 8, colorType: 6, interlaced: false, chunks: 3 });
    expect(inspectPng(png(1, 1, { bitDepth: 1, colorType: 0 }))).toMatchObject({ ok: true, width: 1, height: 1, bitDepth: 1, colorType: 0 });
    expect(inspectPng(png(7, 5, { bitDepth: 16, colorType: 2 }))).toMatchObject({ ok: true, bitDepth: 16, colorType: 2 });
    expect(inspectPng(png(4, 4, { bitDepth: 4, colorType: 3, palette: true }))).toMatchObject({ ok: true, colorType: 3, chunks: 4 });
  });

  it('rejects a file cut short, wherever it is cut', () => {
    const whole = png(32, 32);
    for (const length of [3, 8, 20, 33, whole.length - 20, whole.length - 1]) {
      expect({ length, check: inspectPng(whole.subarray(0, length)) }).toMatchObject({ length, check: { ok: false, reason: 'truncated' } });
    }
    expect(inspectPng(Buffer.alloc(0))).toMatchObject({ ok: false, reason: 'empty' });
  });

  it('rejects what does not start with the PNG signature (a GIF, HTML, a JPEG)', () => {
    for (const bytes of [Buffer.from('GIF89a\x01\x00\x01\x00'), Buffer.from('<!doctype html><html>'), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10])]) {
      expect(inspectPng(bytes)).toMatchObject({ ok: false, reason: 'bad-signature' });
    }
    const lowercase = png(2, 2);
    lowercase[1] = 0x70; // 'p'
    expect(inspectPng(lowercase)).toMatchObject({ ok: false, reason: 'bad-signature' });
  });

  it('rejects an IHDR whose CRC does not match its bytes, naming both', () => {
    const check = inspectPng(png(10, 10, { ihdrCrc: 0x12345678 }));
    expect(check).toMatchObject({ ok: false, reason: 'bad-ihdr-crc' });
    expect(!check.ok && check.detail).toMatch(/0x12345678/);
    const flipped = png(10, 10);
    flipped[8 + 8 + 3] ^= 0x01; // a bit of the width: the stored CRC no longer matches
    expect(inspectPng(flipped)).toMatchObject({ ok: false, reason: 'bad-ihdr-crc' });
  });

  it('rejects a zero width or height, and impossible header fields', () => {
    expect(inspectPng(png(0, 10))).toMatchObject({ ok: false, reason: 'bad-dimensions' });
    expect(inspectPng(png(10, 0))).toMatchObject({ ok: false, reason: 'bad-dimensions' });
    expect(inspectPng(png(10, 10, { bitDepth: 3, colorType: 2 }))).toMatchObject({ ok: false, reason: 'bad-bit-depth' });
    expect(inspectPng(png(10, 10, { bitDepth: 8, colorType: 5 }))).toMatchObject({ ok: false, reason: 'bad-bit-depth' });
    const interlace = Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr(2, 2, 8, 6, [0, 0, 2])), chunk('IEND', Buffer.alloc(0))]);
    expect(inspectPng(interlace)).toMatchObject({ ok: false, reason: 'bad-ihdr' });
  });

  it('rejects files whose first chunk is not IHDR, a later chunk whose CRC is wrong, and missing image data or palette', () => {
    expect(inspectPng(Buffer.concat([PNG_SIGNATURE, chunk('IEND', Buffer.alloc(0))]))).toMatchObject({ ok: false, reason: 'no-ihdr' });
    const badIdat = png(3, 3);
    badIdat[badIdat.length - 12 - 5] ^= 0xff; // the last byte of IDAT's CRC
    expect(inspectPng(badIdat)).toMatchObject({ ok: false, reason: 'bad-chunk-crc' });
    expect(inspectPng(Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr(2, 2)), chunk('IEND', Buffer.alloc(0))]))).toMatchObject({ ok: false, reason: 'no-image-data' });
    expect(inspectPng(png(2, 2, { bitDepth: 8, colorType: 3 }))).toMatchObject({ ok: false, reason: 'no-palette' });
  });

  it('refuses more pixels than allowed, before anything is decoded', () => {
    expect(inspectPng(png(100, 100), { maxPixels: 9_999 })).toMatchObject({ ok: false, reason: 'too-many-pixels' });
    expect(inspectPng(png(100, 100), { maxPixels: 10_000 })).toMatchObject({ ok: true });
  });
});
