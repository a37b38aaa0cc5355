import type { Parser } from 'htmlparser2';

/** Open elements a parser keeps at most; Blink's HTML parser stops nesting at the same depth. */
export const MAX_OPEN_ELEMENTS = 512;

/**
 * Call from `onopentag`. htmlparser2 keeps its open elements (and svg/math contexts) in arrays it grows at
 * the front, so each open tag costs time in proportion to the depth, and a hostile 1 MB page of nested
 * unclosed tags would hold a parser for seconds. Past `MAX_OPEN_ELEMENTS` the outermost are forgotten:
 * their end tags become strays, which the parser ignores, and everything inside is still read. The arrays
 * are the parser's private fields; the tests that parse 200,000 nested tags fail if they are renamed.
 */
export function forgetOutermostElements(parser: Parser): void {
  const { stack, foreignContext } = parser as unknown as { stack: string[]; foreignContext: boolean[] };
  if (stack.length > MAX_OPEN_ELEMENTS) stack.length = MAX_OPEN_ELEMENTS;
  if (foreignContext.length > MAX_OPEN_ELEMENTS) foreignContext.length = MAX_OPEN_ELEMENTS;
}
