import { BLOOM_HASHER_NAME, BloomHasher, bloomParameters, type BloomParameters, estimatedFalsePositiveRate, estimatedItems } from '@crawler/bloom';
import type { StateStore } from '@crawler/state';
import type { BloomSeenStats, SeenSet } from './seen-set';

const KEY = 'bloom';

/**
 * A Bloom filter whose bits are one bitmap in the state store, sized for `expectedUrls` at
 * `falsePositiveRate` (at 1 %: 9.59 bits = 1.2 bytes a URL). Test-and-set of a URL's k bits is one atomic
 * step (`bitsTestAndSet`), so two replicas never both admit one URL. A false positive loses a URL.
 */
export class BloomSeenSet implements SeenSet {
  readonly layout: string;
  readonly params: BloomParameters;
  private readonly hasher: BloomHasher;

  constructor(
    private readonly store: StateStore,
    expectedUrls: number,
    falsePositiveRate: number,
  ) {
    this.params = bloomParameters(expectedUrls, falsePositiveRate);
    this.hasher = new BloomHasher(this.params);
    this.layout = `bloom bits=${this.params.bits} hashes=${this.params.hashes} hasher=${BLOOM_HASHER_NAME} seed=0`;
  }

  testAndAdd(urls: string[]): Promise<boolean[]> {
    return this.store.bitsTestAndSet(KEY, urls.map((url) => this.hasher.offsets(url)));
  }

  async stats(): Promise<BloomSeenStats> {
    const { bits, hashes } = this.params;
    const bitsSet = await this.store.bitCount(KEY);
    return {
      mode: 'bloom',
      bits,
      hashes,
      bitsSet,
      fillRatio: bitsSet / bits,
      urls: estimatedItems(bitsSet, bits, hashes),
      falsePositiveRate: estimatedFalsePositiveRate(bitsSet, bits, hashes),
      bytes: Math.ceil(bits / 8),
    };
  }
}
