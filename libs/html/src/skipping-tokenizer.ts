import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

/** The members of htmlparser2's Tokenizer that SkippingTokenizer uses, reads or overrides (the last two kinds private in its typings). */
interface TokenizerInternals {
  write(chunk: string): void;
  end(): void;
  buffer: string;
  index: number;
  offset: number;
  stateText(c: number): void;
  handleInAttributeValue(c: number, quote: number): void;
  fastForwardTo(c: number): boolean;
}

const LT = 0x3c;
const AMP = 0x26;

/**
 * htmlparser2's Tokenizer, with its two busiest states made to skip. In text and in a quoted attribute value,
 * every character but `<` (or the closing quote) and `&` leaves the state as it was, yet the tokenizer walks
 * each through its state switch; these overrides jump over a run of them in one tight loop instead (the
 * tokenizer goes on from the character that ends the run, so its events are the same). And where it already
 * skips, to the `<` that may end a script or style, it searches with `indexOf` rather than a character at a
 * time. The methods are the tokenizer's private ones; the parser's equivalence test fails if they are renamed
 * or change meaning.
 */
export class SkippingTokenizer extends (Tokenizer as unknown as new (
  options: { xmlMode?: boolean; decodeEntities?: boolean },
  cbs: TokenizerCallbacks,
) => TokenizerInternals) {
  override stateText(c: number): void {
    if (c === LT || c === AMP) super.stateText(c);
    else this.index = this.lastBefore(LT, AMP);
  }

  override handleInAttributeValue(c: number, quote: number): void {
    if (c === quote || c === AMP) super.handleInAttributeValue(c, quote);
    else this.index = this.lastBefore(quote, AMP);
  }

  /** Moves to the next `c` and answers true, or to the buffer's last character and answers false. */
  override fastForwardTo(c: number): boolean {
    const at = this.buffer.indexOf(String.fromCharCode(c), this.index - this.offset + 1);
    this.index = (at === -1 ? this.buffer.length - 1 : at) + this.offset;
    return at !== -1;
  }

  /** Where the next `&` and the next `stop` are in `nextIn`, as `indexOf` found them (the buffer's length: none). */
  private nextIn = '';
  private nextAmp = -1;
  private nextStop = -1;
  private stop = -1;

  /**
   * The index of the last character before the next `stop` or `&` (or the buffer's end): the tokenizer
   * resumes after it. Each search is remembered until the tokenizer has passed what it found, so a character
   * is searched for once per occurrence, however many runs end before it (a long text of `&amp;`s and no `<`
   * is read once, not once an entity).
   */
  private lastBefore(stop: number, amp: number): number {
    const buffer = this.buffer;
    const from = this.index - this.offset + 1;
    if (buffer !== this.nextIn) {
      this.nextIn = buffer;
      this.nextAmp = this.nextStop = -1;
    }
    if (this.nextAmp < from) this.nextAmp = search(buffer, amp, from);
    if (this.nextStop < from || this.stop !== stop) {
      this.stop = stop;
      this.nextStop = search(buffer, stop, from);
    }
    return Math.min(this.nextAmp, this.nextStop) - 1 + this.offset;
  }
}

/** The index of the first `c` in `buffer` at or after `from`, or the buffer's length. */
function search(buffer: string, c: number, from: number): number {
  const at = buffer.indexOf(String.fromCharCode(c), from);
  return at < 0 ? buffer.length : at;
}
