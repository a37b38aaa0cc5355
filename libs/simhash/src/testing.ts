/**
 * Deterministic pseudo-English (mulberry32 PRNG): 4,000 made-up words drawn by Zipf's law (a few very
 * common, most rare, like real text), in sentences of 8–20 words. The same seed gives the same text, so
 * statistics over it never flake.
 */
export function pseudoEnglish(seed: number) {
  let s = seed;
  const random = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const syllables = ['ka', 'lo', 'mi', 'ne', 'tu', 'ra', 'shi', 'po', 'de', 'ven', 'an', 'ter', 'is', 'on', 'gr', 'al'];
  const vocabulary = Array.from({ length: 4000 }, (_, i) => {
    let word = '';
    for (let n = i + 1; n > 0; n = Math.floor(n / 16)) word += syllables[n % 16];
    return word;
  });
  const cumulative: number[] = [];
  let total = 0;
  for (let rank = 1; rank <= vocabulary.length; rank++) cumulative.push((total += 1 / rank));
  const word = () => {
    const r = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < r) lo = mid + 1;
      else hi = mid;
    }
    return vocabulary[lo];
  };
  const sentence = (length = 8 + Math.floor(random() * 13)) => {
    const words = Array.from({ length }, word).join(' ');
    return `${words.charAt(0).toUpperCase()}${words.slice(1)}.`;
  };
  /** A page of about `words` words, as its sentences. */
  const page = (words: number) => {
    const sentences: string[] = [];
    for (let count = 0; count < words; count += sentences[sentences.length - 1].split(' ').length) sentences.push(sentence());
    return sentences;
  };
  return { random, word, sentence, page };
}
