import { performance } from 'node:perf_hooks';

/**
 * Refuses a regular expression that could take catastrophic time on a URL, before it ever sees one. V8's
 * engine backtracks, and a linear-time engine (RE2) would need a native addon, so two checks stand in:
 *
 * 1. by its shape: a back-reference, or an unbounded quantifier on a group that holds one (`(a+)+`,
 *    `(\w*\/)*`): the shapes whose backtracking is exponential;
 * 2. by its time: it is run against hostile inputs (runs of each character it names, then a character that
 *    fails the match), growing from a few characters to `maxLength`; more than `budgetMs` for one input
 *    refuses it. Growing catches polynomial blow-ups (`.*a.*a.*a`) at a size where they still end quickly.
 *
 * Returns why it is refused, with the 1-based position in the pattern when the shape is at fault, or
 * undefined when it is safe to run.
 */
export function regexHazard(pattern: string, regex: RegExp, maxLength: number, budgetMs = 50): string | undefined {
  return shapeHazard(pattern) ?? timeHazard(regex, pattern, maxLength, budgetMs);
}

interface Group {
  /** It holds an unbounded quantifier (directly or in a nested group). */
  unbounded: boolean;
  start: number;
}

/** What a repeating quantifier (`*`, `+`, `{n,}`, `{n,m}` with m > n) starts at `i`, if one does: its length. */
function unboundedAt(pattern: string, i: number): number {
  const c = pattern[i];
  if (c === '*' || c === '+') return 1;
  const m = /^\{(\d+),(\d*)\}/.exec(pattern.slice(i, i + 24));
  return m && (m[2] === '' || Number(m[2]) > Number(m[1])) ? m[0].length : 0;
}

function shapeHazard(pattern: string): string | undefined {
  const stack: Group[] = [{ unbounded: false, start: 0 }];
  /** The group that just closed, while the next character may quantify it. */
  let closed: Group | undefined;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const quantified = closed;
    closed = undefined;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<')) return `a back-reference at position ${i + 1} of the expression`;
      i++;
      continue;
    }
    if (c === '[') {
      // A character class: nothing in it quantifies or groups.
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
      continue;
    }
    if (c === '(') {
      stack.push({ unbounded: false, start: i });
      continue;
    }
    if (c === ')' && stack.length > 1) {
      closed = stack.pop()!;
      if (closed.unbounded) stack[stack.length - 1].unbounded = true;
      continue;
    }
    const length = unboundedAt(pattern, i);
    if (length > 0) {
      if (quantified?.unbounded) {
        return `a repeated group that itself repeats (nested quantifiers) at position ${quantified.start + 1} of the expression: catastrophic backtracking`;
      }
      stack[stack.length - 1].unbounded = true;
      i += length - 1;
    }
  }
  return undefined;
}

/** The characters worth repeating at a pattern: those it names, and a few every URL is made of. */
function hostileAlphabet(pattern: string): string[] {
  const named = pattern.replace(/\\./g, '').replace(/[^\w./%=&?#:;,~+-]/g, '');
  return [...new Set([...named, 'a', '0', '/', '-', '.', '%', '=', '&'])];
}

function timeHazard(regex: RegExp, pattern: string, maxLength: number, budgetMs: number): string | undefined {
  const probe = new RegExp(regex.source, regex.flags.replace(/[gy]/g, ''));
  const alphabet = hostileAlphabet(pattern);
  for (let size = 8; ; size = nextProbeSize(size)) {
    const n = Math.min(size, maxLength);
    for (const c of alphabet) {
      const run = c.repeat(n);
      // Each run ends in a character no pattern expects, so that the match fails after trying every split.
      for (const input of [`http://a.test/${run}\u0001`, `/${run}\u0001`, `${run}\u0001`, `${`/${c}`.repeat(n / 2)}\u0001`]) {
        const took = fastestOf(3, () => probe.test(input), budgetMs);
        if (took > budgetMs) {
          return `takes ${Math.round(took)} ms on ${input.length} characters of ${JSON.stringify(c)} (over ${budgetMs} ms): catastrophic backtracking`;
        }
      }
    }
    if (n >= maxLength) return undefined;
  }
}

/**
 * The input size after `size`: +4 up to 32 characters, then a quarter more each time. A polynomial blow-up
 * of degree d grows its time by 1.25^d a step (under 4× for `.*a` six times over), so the first input over
 * the budget takes a few budgets at most; doubling grew it 2^d (64×), and the check itself took seconds.
 */
export function nextProbeSize(size: number): number {
  return size < 32 ? size + 4 : Math.ceil(size * 1.25);
}

/**
 * How long `run` takes: the fastest of up to `tries` runs, repeated only while over `budgetMs`, so that a
 * pause of a busy machine (a GC, a descheduled process) is not taken for a slow expression.
 */
function fastestOf(tries: number, run: () => unknown, budgetMs: number): number {
  let fastest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < tries && fastest > budgetMs; i++) {
    const started = performance.now();
    run();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}
