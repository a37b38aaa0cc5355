import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PluginContext, PluginFetched, PluginHandler } from '@crawler/plugin-sdk';
import type { PngConfig } from './png.config';
import { COLOR_TYPES, inspectPng, PngRejection } from './png-validator';

/** Object metadata is kept under this many bytes (S3 caps user metadata at 2 KB); longer URLs go to a sidecar. */
const INLINE_METADATA_BYTES = 1536;

/** What the plugin records of a stored image (state `images`: URL → this, as JSON; and the object's metadata). */
export interface StoredPng {
  url: string;
  /** The page the image was found on, when known. */
  sourcePage?: string;
  key: string;
  sha256: string;
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  bytes: number;
  fetchedAt: string;
}

/** Where a PNG is stored: content-addressed by the SHA-256 of its bytes, sharded by its first byte. */
export function imageKeyOf(sha256: string): string {
  return `images/${sha256.slice(0, 2)}/${sha256}.png`;
}

/**
 * The PNG downloader's work on each claimed response: check the file (signature, IHDR, chunks), then keep
 * one copy of each distinct image (by the SHA-256 of its bytes; the first URL with those bytes owns them)
 * in the content store with its dimensions, bit depth, colour type and source page. A copy served at
 * another URL is recorded against the original, not stored again. A corrupt file is rejected with its
 * reason: counted (`plugin.png.rejected.<reason>`), logged, recorded (state `rejected`: URL → reason).
 */
@Injectable()
export class PngPluginHandler implements PluginHandler {
  constructor(@Inject(PluginContext) private readonly ctx: PluginContext<PngConfig>) {}

  async onFetched(fetched: PluginFetched, body: Buffer): Promise<void> {
    if (fetched.truncated) return this.reject(fetched, 'too-large', `longer than ${this.ctx.config.maxBytes} bytes (PLUGIN_PNG_MAX_BYTES)`);
    const check = inspectPng(body, { maxPixels: this.ctx.config.maxPixels });
    if (!check.ok) return this.reject(fetched, check.reason, check.detail);

    const sha256 = createHash('sha256').update(body).digest('hex');
    // One atomic claim: the first URL with these bytes owns them; a redelivered job finds itself the owner.
    const owner = await this.ctx.hash('original').setIfAbsent(sha256, fetched.url);
    if (owner !== null && owner !== fetched.url) {
      await this.ctx.hash('duplicates').set(fetched.url, JSON.stringify({ original: owner, sha256 }));
      await this.ctx.count('duplicate');
      this.ctx.logger.info({ event: 'png-duplicate', url: fetched.url, original: owner }, 'PNG already stored');
      return;
    }
    const stored: StoredPng = {
      url: fetched.url,
      ...(fetched.source ? { sourcePage: fetched.source } : {}),
      key: imageKeyOf(sha256),
      sha256,
      width: check.width,
      height: check.height,
      bitDepth: check.bitDepth,
      colorType: check.colorType,
      bytes: body.length,
      fetchedAt: fetched.fetchedAt,
    };
    await this.write(stored, body);
    await this.ctx.hash('images').set(fetched.url, JSON.stringify(stored));
    await this.ctx.count('stored');
    this.ctx.logger.info({ event: 'png-stored', url: stored.url, key: stored.key, width: stored.width, height: stored.height }, 'PNG stored');
  }

  private async write(stored: StoredPng, body: Buffer) {
    const fixed: Record<string, string> = {
      contentType: 'image/png',
      sha256: stored.sha256,
      width: String(stored.width),
      height: String(stored.height),
      bitDepth: String(stored.bitDepth),
      colorType: String(stored.colorType),
      colorTypeName: COLOR_TYPES[stored.colorType],
      fetchedAt: stored.fetchedAt,
    };
    const full = { ...fixed, url: stored.url, ...(stored.sourcePage ? { sourcePage: stored.sourcePage } : {}) };
    if (encodedSize(full) <= INLINE_METADATA_BYTES) return this.ctx.content.put(stored.key, body, full);
    // Long URLs: everything in a sidecar, written first so that an image naming one always has it.
    const sidecar = stored.key.replace(/\.png$/, '.meta.json');
    await this.ctx.content.put(sidecar, Buffer.from(JSON.stringify(stored)), { contentType: 'application/json' });
    await this.ctx.content.put(stored.key, body, { ...fixed, metadata: sidecar });
  }

  private async reject(fetched: PluginFetched, reason: PngRejection, detail: string) {
    await this.ctx.hash('rejected').set(fetched.url, JSON.stringify({ reason, detail, ...(fetched.source ? { sourcePage: fetched.source } : {}) }));
    await this.ctx.count(`rejected.${reason}`);
    this.ctx.logger.info({ event: 'png-rejected', url: fetched.url, reason, detail }, 'PNG rejected');
  }
}

function encodedSize(meta: Record<string, string>): number {
  let size = 0;
  for (const [name, value] of Object.entries(meta)) size += name.length + encodeURIComponent(value).length;
  return size;
}
