import { hammingDistance, isSimhash, simhash64, simhashHalves } from './simhash';
import { pseudoEnglish } from './testing';

type Generator = ReturnType<typeof pseudoEnglish>;

/** Distances between each of `pages` pages of about `words` words and its copy edited by `edit`. */
function editedDistances(seed: number, pages: number, words: number, edit: (sentences: string[], gen: Generator) => void): number[] {
  const gen = pseudoEnglish(seed);
  return Array.from({ length: pages }, () => {
    const original = gen.page(words);
    const edited = [...original];
    edit(edited, gen);
    return hammingDistance(simhash64(original.join(' ')), simhash64(edited.join(' ')));
  });
}

const share = (distances: number[], test: (d: number) => boolean) => distances.filter(test).length / distances.length;
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

describe('simhash64', () => {
  it('gives 16 lowercase hex digits, the same every time for the same text', () => {
    const text = pseudoEnglish(1).page(300).join(' ');
    const hash = simhash64(text);
    expect(hash).toMatch(/^[0-9a-f]{16}$/);
    expect(isSimhash(hash)).toBe(true);
    expect(simhash64(text)).toBe(hash);
  });

  it('pins the persisted format: these values must never change (the index in Redis depends on them)', () => {
    expect(simhash64('The quick brown fox jumps over the lazy dog')).toBe(GOLDEN.fox);
    expect(simhash64(pseudoEnglish(42).page(500).join(' '))).toBe(GOLDEN.page);
    expect(simhash64('Съешь же ещё этих мягких французских булок, да выпей чаю')).toBe(GOLDEN.russian);
    expect(simhash64('吾輩は猫である。名前はまだ無い。')).toBe(GOLDEN.japanese);
  });

  it('sees words only: case, punctuation, markup leftovers and whitespace make no difference', () => {
    const a = 'Hello, World! This is the   first paragraph.\n\nAnd — here — the second one: 42 items.';
    const b = 'hello world this is the first paragraph and here the second one 42 items';
    expect(simhash64(a)).toBe(simhash64(b));
    expect(hammingDistance(simhash64(a), simhash64(b))).toBe(0);
    expect(simhash64('ÉCOLE Straße ДОМ')).toBe(simhash64('école straße дом'));
  });

  it('hashes a text without words to zero, and a text of one or two words to their own shingle', () => {
    expect(simhash64('')).toBe('0000000000000000');
    expect(simhash64(' .,;—! ')).toBe('0000000000000000');
    const one = simhash64('crawler');
    const two = simhash64('web crawler');
    expect(one).not.toBe('0000000000000000');
    expect(new Set([one, two, simhash64('crawler web'), simhash64('frontier')]).size).toBe(4);
  });

  it('is order-sensitive: the same words shuffled are another text', () => {
    const words = pseudoEnglish(3).page(500).join(' ').split(' ');
    const shuffled = [...words].reverse();
    expect(hammingDistance(simhash64(words.join(' ')), simhash64(shuffled.join(' ')))).toBeGreaterThan(10);
  });

  it('puts unrelated pages far apart: > 10 bits for every one of 200 pairs, ≈ 32 on average', () => {
    const gen = pseudoEnglish(7);
    const distances = Array.from({ length: 200 }, () => hammingDistance(simhash64(gen.page(500).join(' ')), simhash64(gen.page(500).join(' '))));
    expect(Math.min(...distances)).toBeGreaterThan(10);
    expect(mean(distances)).toBeGreaterThan(29);
    expect(mean(distances)).toBeLessThan(35);
  });

  it('catches one changed word in a ~500-word page: ≤ 3 bits for ≥ 75 % of 200 pages', () => {
    const distances = editedDistances(11, 200, 500, (sentences, gen) => {
      const i = Math.floor(gen.random() * sentences.length);
      const words = sentences[i].split(' ');
      words[Math.floor(gen.random() * words.length)] = gen.word();
      sentences[i] = words.join(' ');
    });
    expect(share(distances, (d) => d <= 3)).toBeGreaterThanOrEqual(0.75);
  });

  it('catches one changed sentence in a long (~5,000-word) page: ≤ 3 bits for ≥ 90 % of 200 pages', () => {
    const distances = editedDistances(12, 200, 5000, (sentences, gen) => {
      const i = Math.floor(gen.random() * sentences.length);
      sentences[i] = gen.sentence(sentences[i].split(' ').length);
    });
    expect(share(distances, (d) => d <= 3)).toBeGreaterThanOrEqual(0.9);
  });

  it("moves one changed sentence in a ~500-word page by ≈ 5 bits, as Charikar's bound says: 3 bits catch it only sometimes", () => {
    // A 14-word sentence of 500 words changes ≈ 16 of 500 shingles: cosine similarity ρ ≈ 0.968, and each
    // bit differs with probability arccos(ρ)/π ≈ 0.08, so ≈ 5 of 64 bits. This pins the limit of a 64-bit
    // simhash at distance 3 (≈ 1 % of the shingles changed), documented in simhash.ts.
    const distances = editedDistances(13, 200, 500, (sentences, gen) => {
      const i = Math.floor(gen.random() * sentences.length);
      sentences[i] = gen.sentence(sentences[i].split(' ').length);
    });
    expect(mean(distances)).toBeGreaterThan(3.5);
    expect(mean(distances)).toBeLessThan(7);
    expect(share(distances, (d) => d <= 3)).toBeGreaterThan(0.1);
    expect(share(distances, (d) => d <= 3)).toBeLessThan(0.5);
    expect(share(distances, (d) => d <= 10)).toBeGreaterThan(0.95);
  });

  it('reads scripts without spaces between words (Chinese here) character by character', () => {
    const gen = pseudoEnglish(5);
    // Each made-up word becomes two of 20,000 ideographs, and the text has no space anywhere.
    const toHan = (sentences: string[]) =>
      sentences
        .join(' ')
        .split(/\W+/)
        .map((word) => {
          let h = 0;
          for (const c of word) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
          return String.fromCharCode(0x4e00 + (h % 20000), 0x4e00 + ((h >>> 15) % 20000));
        })
        .join('');
    const original = toHan(gen.page(2000));
    const edited = `${original.slice(0, 1000)}变${original.slice(1001)}`;
    expect(hammingDistance(simhash64(original), simhash64(edited))).toBeLessThanOrEqual(3);
    expect(hammingDistance(simhash64(original), simhash64(toHan(gen.page(2000))))).toBeGreaterThan(10);
  });
});

describe('hammingDistance', () => {
  it('counts the differing bits', () => {
    expect(hammingDistance('0000000000000000', '0000000000000000')).toBe(0);
    expect(hammingDistance('0000000000000000', 'ffffffffffffffff')).toBe(64);
    expect(hammingDistance('8000000000000001', '0000000000000000')).toBe(2);
    expect(hammingDistance('00000000f0000000', '0000000000000000')).toBe(4);
    expect(hammingDistance('0123456789abcdef', '0123456789abcdee')).toBe(1);
  });

  it('rejects anything but 16 lowercase hex digits', () => {
    for (const bad of ['', '0', '0123456789ABCDEF', '0123456789abcdeg', '0123456789abcdef0']) {
      expect(() => hammingDistance(bad, '0000000000000000')).toThrow(/not a simhash/);
      expect(isSimhash(bad)).toBe(false);
    }
    expect(simhashHalves('ffffffff00000001')).toEqual([0xffffffff, 1]);
  });
});

/** Computed once by this implementation; see the test that pins them. */
const GOLDEN = {
  fox: '600b76ce907a69f1',
  page: '7d07fa47423f5a15',
  russian: '0a8b29420ddd6510',
  japanese: 'c6c424d8a8837c11',
};
