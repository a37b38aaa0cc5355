import { PATTERN_FLAGS } from './monitor.config';

/** One thing watched for: a configured term (whole words, any case) or a configured pattern. */
export interface Watch {
  /** What an alert names: the term as configured, or the pattern's source. */
  term: string;
  kind: 'term' | 'pattern';
  regex: RegExp;
}

/** Where a watch first matched a text. */
export interface Match {
  term: string;
  kind: Watch['kind'];
  /** The matched text as it appears. */
  matched: string;
  index: number;
}

/** Characters kept on each side of a match in its snippet. */
export const SNIPPET_RADIUS = 60;

const WORD = '[\\p{L}\\p{N}_]';
const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The regex of a term: case-insensitive, its inner whitespace matching any whitespace, and bounded by
 * non-word characters on both sides. Unicode-aware (`\b` is ASCII-only in JavaScript, so `\bСъешь\b` never
 * matches): a letter or digit of any script next to the term means it is part of a longer word.
 */
export function termRegex(term: string): RegExp {
  const body = term.trim().split(/\s+/).map(escapeRegex).join('\\s+');
  return new RegExp(`(?<!${WORD})${body}(?!${WORD})`, 'iu');
}

export function compileWatches(terms: readonly string[], patterns: readonly RegExp[]): Watch[] {
  return [
    ...terms.map((term) => ({ term, kind: 'term' as const, regex: termRegex(term) })),
    ...patterns.map((p) => ({ term: p.source, kind: 'pattern' as const, regex: new RegExp(p.source, PATTERN_FLAGS) })),
  ];
}

/** The first match of each watch in `text` (one per watch: an alert is per page version and term). */
export function findMatches(text: string, watches: readonly Watch[]): Match[] {
  const matches: Match[] = [];
  for (const watch of watches) {
    const found = watch.regex.exec(text);
    if (found && found[0].length > 0) matches.push({ term: watch.term, kind: watch.kind, matched: found[0], index: found.index });
  }
  return matches;
}

/**
 * The text around a match: up to SNIPPET_RADIUS characters each side, whitespace collapsed, with `…` where
 * the text was cut. Cuts never split a surrogate pair.
 */
export function snippetOf(text: string, index: number, length: number, radius = SNIPPET_RADIUS): string {
  let start = Math.max(0, index - radius);
  let end = Math.min(text.length, index + length + radius);
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start--;
  if (end < text.length && isLowSurrogate(text.charCodeAt(end))) end++;
  const core = text.slice(start, end).replace(/\s+/g, ' ').trim();
  return `${start > 0 ? '…' : ''}${core}${end < text.length ? '…' : ''}`;
}

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** What the monitor searches on a page: its title and its visible text, as one string. */
export function monitoredText(page: { title?: string; text: string }): string {
  return [page.title, page.text]
    .filter((part) => part?.trim())
    .join('\n')
    .replace(/\s+/g, ' ');
}
