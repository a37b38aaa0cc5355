import { BLOOM_HASHER_NAME, BloomHasher, shardedBloomParameters, type ShardedBloomParameters, estimatedFalsePositiveRate, estimatedItems } from '@crawler/bloom';
import { hashTag, spacedTags } from '@crawler/redis';
import type { StateStore } from '@crawler/state';
import type { BloomSeenStats, SeenSet } from './seen-set';

/** The bitmap of an unsharded filter (and of every filter before shards). */
const KEY = 'bloom';

/** URLs one test-and-set of a shard carries at most, however many callers are waiting for it. */
export const MAX_URLS_PER_STEP = 2000;

interface Waiting {
  offsets: number[][];
  resolve: (seen: boolean[]) => void;
  reject: (error: unknown) => void;
}

/**
 * One shard's test-and-sets, one step in flight at a time: what callers ask meanwhile waits and goes as one
 * step when it returns (the first step waits for the calls of the same turn). A host's batch of links is
 * a few URLs, which a sharded filter cuts into one step a shard each: without this a page cost URL-seen
 * ~20 Redis commands on a cluster, one for every couple of URLs. A URL asked twice in one step is new the
 * first time only, as if asked one after the other.
 */
class ShardSteps {
  private waiting: Waiting[] = [];
  private running = false;

  constructor(private readonly step: (offsets: number[][]) => Promise<boolean[]>) {}

  testAndSet(offsets: number[][]): Promise<boolean[]> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ offsets, resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch: Waiting[] = [];
      let urls = 0;
      while (this.waiting.length > 0 && (batch.length === 0 || urls + this.waiting[0].offsets.length <= MAX_URLS_PER_STEP)) {
        const next = this.waiting.shift()!;
        batch.push(next);
        urls += next.offsets.length;
      }
      try {
        const seen = await this.step(batch.flatMap((w) => w.offsets));
        let at = 0;
        for (const w of batch) w.resolve(seen.slice(at, (at += w.offsets.length)));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.running = false;
  }
}

/**
 * A Bloom filter whose bits are bitmaps in the state store, sized for `expectedUrls` at `falsePositiveRate`
 * (at 1 %: 9.59 bits = 1.2 bytes a URL). A Redis bitmap holds 2^32 bits (≈ 448 M URLs at 1 %), so a larger
 * filter, or one on a cluster (`minShards`: its shards spread over the masters), is split into shards by URL
 * hash, each its own key: a URL's k bits are all in its shard, and its test-and-set is one atomic step
 * there (`bitsTestAndSet`), so two replicas never both admit one URL. A false positive loses a URL.
 *
 * On a cluster (`spacedSlots`) shard i is `bloom:{b<i>…}`, a hash tag whose slot is evenly spaced from the
 * others' (spacedTags), so each master holds as many shards, give or take one: the filter is most of what a
 * crawl keeps in Redis. A filter written before, as `bloom:<i>` wherever each name hashed, is still read
 * (`adopt`): its layout names no spacing.
 */
export class BloomSeenSet implements SeenSet {
  layout: string;
  readonly params: ShardedBloomParameters;
  private readonly hasher: BloomHasher;
  private keys: string[];
  private steps: ShardSteps[];
  /** The layout and keys of the same filter before its shards were spaced, for a store that holds one. */
  private readonly unspaced?: { layout: string; keys: string[] };

  constructor(
    private readonly store: StateStore,
    expectedUrls: number,
    falsePositiveRate: number,
    minShards = 1,
    spacedSlots = false,
  ) {
    this.params = shardedBloomParameters(expectedUrls, falsePositiveRate, minShards);
    const { shards, bits, hashes } = this.params;
    this.hasher = new BloomHasher(this.params);
    const sharding = shards === 1 ? '' : `shards=${shards} `;
    const layout = `bloom ${sharding}bits=${bits} hashes=${hashes} hasher=${BLOOM_HASHER_NAME} seed=0`;
    const plainKeys = shards === 1 ? [KEY] : Array.from({ length: shards }, (_, i) => `${KEY}:${i}`);
    if (spacedSlots && shards > 1) {
      this.keys = spacedTags('b', shards).map((tag) => `${KEY}:${hashTag(tag)}`);
      this.layout = `${layout} slots=spaced`;
      this.unspaced = { layout, keys: plainKeys };
    } else {
      this.keys = plainKeys;
      this.layout = layout;
    }
    this.steps = this.stepsOf(this.keys);
  }

  /** Takes a store's recorded layout if it is this filter's, written before its shards were spaced; answers whether it did. */
  adopt(recorded: string): boolean {
    if (!this.unspaced || recorded !== this.unspaced.layout) return false;
    this.layout = this.unspaced.layout;
    this.keys = this.unspaced.keys;
    this.steps = this.stepsOf(this.keys);
    return true;
  }

  /**
   * Each shard's key and the bytes its bitmap takes: Redis allocates a string up to its highest bit set,
   * and the first few URLs set bits all over every shard, so the whole filter is taken at the first page.
   */
  shardSizes(): { key: string; bytes: number }[] {
    const bytes = Math.ceil(this.params.bits / 8);
    return this.keys.map((key) => ({ key, bytes }));
  }

  /** One test-and-set per shard the batch touches (shared with concurrent callers), in parallel; answers in the URLs' order. */
  async testAndAdd(urls: string[]): Promise<boolean[]> {
    if (urls.length === 0) return [];
    if (this.keys.length === 1) return this.steps[0].testAndSet(urls.map((url) => this.hasher.offsets(url)));
    const byShard = new Map<number, { at: number[]; offsets: number[][] }>();
    urls.forEach((url, at) => {
      const { shard, offsets } = this.hasher.place(url, this.keys.length);
      let batch = byShard.get(shard);
      if (!batch) byShard.set(shard, (batch = { at: [], offsets: [] }));
      batch.at.push(at);
      batch.offsets.push(offsets);
    });
    const answers = new Array<boolean>(urls.length);
    await Promise.all(
      [...byShard].map(async ([shard, batch]) => {
        const seen = await this.steps[shard].testAndSet(batch.offsets);
        batch.at.forEach((at, i) => (answers[at] = seen[i]));
      }),
    );
    return answers;
  }

  private stepsOf(keys: string[]): ShardSteps[] {
    return keys.map((key) => new ShardSteps((offsets) => this.store.bitsTestAndSet(key, offsets)));
  }

  /** Each shard's BITCOUNT, in parallel; the estimates sum (URLs) or average (false positives) over shards. */
  async stats(): Promise<BloomSeenStats> {
    const { shards, bits, hashes, totalBits } = this.params;
    const counts = await Promise.all(this.keys.map((key) => this.store.bitCount(key)));
    const bitsSet = counts.reduce((sum, n) => sum + n, 0);
    return {
      mode: 'bloom',
      shards,
      bits: totalBits,
      hashes,
      bitsSet,
      fillRatio: bitsSet / totalBits,
      urls: counts.reduce((sum, n) => sum + estimatedItems(n, bits, hashes), 0),
      // A URL never seen is tested in one shard, each as likely.
      falsePositiveRate: counts.reduce((sum, n) => sum + estimatedFalsePositiveRate(n, bits, hashes), 0) / shards,
      bytes: Math.ceil(bits / 8) * shards,
    };
  }
}
