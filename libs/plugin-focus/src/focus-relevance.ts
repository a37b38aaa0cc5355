const WORD = '[\\p{L}\\p{N}_]';
const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A term as a regex: any case, inner whitespace matching any whitespace, whole words in any script. */
function termRegex(term: string): RegExp {
  const body = term.trim().split(/\s+/).map(escapeRegex).join('\\s+');
  return new RegExp(`(?<!${WORD})${body}(?!${WORD})`, 'iu');
}

/**
 * Relevance of a page to the topic: the fraction of the topic's terms found in its title or text. A share
 * of distinct terms rather than a count of hits, so a page repeating one word is not taken for the topic.
 */
export class Relevance {
  private readonly regexes: RegExp[];

  constructor(
    terms: readonly string[],
    private readonly threshold: number,
  ) {
    this.regexes = terms.map(termRegex);
  }

  score(text: string): number {
    if (this.regexes.length === 0) return 0;
    return this.regexes.filter((r) => r.test(text)).length / this.regexes.length;
  }

  relevant(text: string): boolean {
    return this.isRelevant(this.score(text));
  }

  isRelevant(score: number): boolean {
    return score >= this.threshold;
  }
}

/**
 * How relevant a page's score is, graded (0…1): its share of the threshold, so that under a threshold of one
 * half a page with one of three terms counts for two thirds, and every relevant page for 1. A page near the
 * topic is then worth following before one that mentions none of it (shark-search's graded relevance).
 */
export function gradeOf(score: number, threshold: number): number {
  return Math.min(1, Math.max(0, score) / threshold);
}
