import { randomBytes } from 'node:crypto';
import { LingerBatcher } from '@crawler/batching';
import type { StateStore } from '@crawler/state';
import type { BodyStaging, StagedBody } from './body-staging';
import { type Codec, type Compression, codecOfKey, decompressSync, extensionOf } from './codec';
import { Compressor } from './compressor';
import type { ContentStore } from './content-store';

export interface BundledBodyStagingOptions {
  /** Bodies in one bundle at most. @defaultValue 64 */
  maxBodies?: number;
  /** Compressed bytes in one bundle at most. @defaultValue 4194304 */
  maxBytes?: number;
  /** A bundle is written at most this long after its first body was staged, full or not. @defaultValue 10 */
  lingerMs?: number;
  /** How each body is compressed (as stored pages keep it). @defaultValue gzip, level 6 */
  compression?: Compression;
  /** Threads compressing the bodies, started on the first (0: zlib's async API). @defaultValue 0 */
  threads?: number;
  /** Bundles kept in memory for readers (a reader usually wants the rest of the bundle next), bytes. @defaultValue 33554432 */
  cacheBytes?: number;
}

interface BundleRef {
  key: string;
  codec: Codec;
  id: string;
  index: number;
  offset: number;
  length: number;
}

/** How long a release waits for others to share its step: the bodies of an envelope are released together. */
const RELEASE_LINGER_MS = 5;

/**
 * Bodies staged within `lingerMs` of each other are compressed one by one and written together as one object,
 * `staging/<id>.gz` (gzip members back to back, itself a valid gzip file) or `staging/<id>.zst` (zstd frames
 * back to back, a valid zstd file). A reference names the bundle and the member:
 * `staging/<id>.gz#<index>.<offset>.<length>`. Readers read either codec, whichever this process writes.
 *
 * The state store keeps the set of a bundle's members not yet released (`bundle:<id>`, written right after
 * the object, before any reference is handed out); releasing one removes it, and the release that empties
 * the set deletes the object. A release is idempotent, so a redelivered message cannot free a body another
 * reader still needs.
 */
export class BundledBodyStaging implements BodyStaging {
  private readonly instance = randomBytes(6).toString('base64url').replace(/[-_]/g, 'x');
  private sequence = 0;
  private readonly bundles: LingerBatcher<Buffer, string>;
  /** References released within RELEASE_LINGER_MS of each other, released together: one step a bundle. */
  private readonly releases: LingerBatcher<string>;
  private readonly cache = new Map<string, { bundle: Promise<Buffer | null>; bytes: number }>();
  private cachedBytes = 0;
  private readonly cacheBytes: number;
  private readonly compressor: Compressor;
  private readonly extension: string;

  /** `state`: the namespace holding the bundles' member sets. */
  constructor(
    private readonly content: ContentStore,
    private readonly state: StateStore,
    options: BundledBodyStagingOptions = {},
  ) {
    this.bundles = new LingerBatcher((members) => this.write(members), {
      lingerMs: options.lingerMs ?? 10,
      maxItems: options.maxBodies ?? 64,
      maxBytes: options.maxBytes ?? 4 * 1024 * 1024,
      bytesOf: (member) => member.length,
    });
    this.releases = new LingerBatcher((refs) => this.releaseMany(refs), { lingerMs: RELEASE_LINGER_MS, maxItems: 1000 });
    const compression = options.compression ?? { codec: 'gzip', level: 6 };
    this.compressor = new Compressor(compression, options.threads ?? 0);
    this.extension = extensionOf(compression.codec);
    this.cacheBytes = options.cacheBytes ?? 32 * 1024 * 1024;
  }

  async stage(body: Buffer): Promise<string> {
    return this.bundles.add((await this.compressor.compress(body)).bytes);
  }

  async read(ref: string): Promise<StagedBody | null> {
    const at = parseRef(ref);
    const bundle = await this.bundle(at.key);
    if (!bundle || at.offset + at.length > bundle.length) return null;
    const member = bundle.subarray(at.offset, at.offset + at.length);
    // Inflated on first use: content-seen stores the member as it is, and needs the bytes only for WARC.
    let body: Buffer | undefined;
    return {
      get body() {
        return (body ??= decompressSync(member, at.codec));
      },
      compressed: async () => ({ codec: at.codec, bytes: member }),
    };
  }

  async release(ref: string): Promise<void> {
    // A malformed reference is refused here, not in the batch it would fail.
    parseRef(ref);
    await this.releases.add(ref);
  }

  async close(): Promise<void> {
    await this.releases.drain();
    await this.bundles.drain();
    await this.compressor.close();
  }

  /**
   * Releases members, a step per bundle: a bundle's members are mostly released together (its bodies travel on
   * in one envelope), so this is one command or three a bundle, not a page.
   */
  private async releaseMany(refs: string[]): Promise<void> {
    const byBundle = new Map<string, { key: string; indexes: string[] }>();
    for (const ref of refs) {
      const at = parseRef(ref);
      const bundle = byBundle.get(at.id) ?? { key: at.key, indexes: [] };
      bundle.indexes.push(String(at.index));
      byBundle.set(at.id, bundle);
    }
    await Promise.all(
      [...byBundle].map(async ([id, { key, indexes }]) => {
        if ((await this.state.setRemove(`bundle:${id}`, indexes)) > 0) return;
        await this.content.delete(key);
        this.forget(key);
      }),
    );
  }

  /** Writes one bundle of compressed members; answers each member's reference. */
  private async write(parts: Buffer[]): Promise<string[]> {
    const id = `${this.instance}-${(this.sequence++).toString(36)}`;
    const key = `staging/${id}${this.extension}`;
    const data = Buffer.concat(parts);
    await this.content.put(key, data);
    await this.state.setAdd(
      `bundle:${id}`,
      parts.map((_, i) => String(i)),
    );
    // The writer is the likeliest next reader's neighbour: readers in this process find it cached.
    this.remember(key, Promise.resolve(data), data.length);
    let offset = 0;
    return parts.map((part, i) => {
      const ref = `${key}#${i}.${offset}.${part.length}`;
      offset += part.length;
      return ref;
    });
  }

  private bundle(key: string): Promise<Buffer | null> {
    const cached = this.cache.get(key);
    if (cached) return cached.bundle;
    const bundle = this.content.get(key).then((o) => o?.body ?? null);
    // A failed read is not remembered: the next reader tries again.
    bundle.catch(() => this.forget(key));
    this.remember(key, bundle, 0);
    void bundle.then(
      (b) => {
        const entry = this.cache.get(key);
        if (!entry || !b) return;
        entry.bytes = b.length;
        this.cachedBytes += b.length;
        this.evict();
      },
      () => undefined,
    );
    return bundle;
  }

  private remember(key: string, bundle: Promise<Buffer | null>, bytes: number): void {
    this.forget(key);
    this.cache.set(key, { bundle, bytes });
    this.cachedBytes += bytes;
    this.evict();
  }

  private evict(): void {
    for (const key of this.cache.keys()) {
      if (this.cachedBytes <= this.cacheBytes) break;
      this.forget(key);
    }
  }

  private forget(key: string): void {
    const entry = this.cache.get(key);
    if (!entry) return;
    this.cachedBytes -= entry.bytes;
    this.cache.delete(key);
  }
}

const REF = /^(staging\/([A-Za-z0-9]+-[a-z0-9]+)\.(?:gz|zst))#(\d+)\.(\d+)\.(\d+)$/;

function parseRef(ref: string): BundleRef {
  const m = REF.exec(ref);
  if (!m) throw new Error(`not a staged body reference: ${JSON.stringify(ref)}`);
  return { key: m[1], codec: codecOfKey(m[1]), id: m[2], index: Number(m[3]), offset: Number(m[4]), length: Number(m[5]) };
}
