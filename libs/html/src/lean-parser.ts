import type { TokenizerCallbacks } from 'htmlparser2';
import { MAX_OPEN_ELEMENTS } from './open-elements';
import { SkippingTokenizer } from './skipping-tokenizer';

/** What a LeanParser reports, and what it asks before doing work the handler may not need. */
export interface LeanHandler {
  /** Whether an open tag's attributes are wanted: a tag whose are not gets `{}`, and no attribute is read. */
  wantsAttributes(name: string): boolean;
  /** Whether text is wanted now: text that is not is never copied out of the document. */
  wantsText(): boolean;
  onopentag(name: string, attributes: Record<string, string>): void;
  onclosetag(name: string): void;
  ontext(data: string): void;
}

/** Elements whose start closes these open elements (htmlparser2's Parser, HTML mode). */
const P = new Set(['p']);
const FORM = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const IMPLIES_CLOSE = new Map<string, Set<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['li', new Set(['li'])],
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', new Set(['dd', 'dt'])],
  ['dt', new Set(['dd', 'dt'])],
  ['rt', new Set(['rt', 'rp'])],
  ['rp', new Set(['rt', 'rp'])],
  ['tbody', new Set(['thead', 'tbody'])],
  ['tfoot', new Set(['thead', 'tbody'])],
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((name) => [name, FORM] as [string, Set<string>]),
  ...'h1 h2 h3 h4 h5 h6 p address article aside blockquote details div dl fieldset figcaption figure footer form header hr main nav ol pre section table ul'
    .split(' ')
    .map((name) => [name, P] as [string, Set<string>]),
]);
const VOID = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
const FOREIGN = new Set(['math', 'svg']);
const HTML_INTEGRATION = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignobject', 'desc', 'title']);

/** What the tables above say of one element, found with one lookup a tag. */
interface TagRule {
  void: boolean;
  /** True for svg and math, false for an HTML integration point (svg's `<title>`…), undefined for the rest. */
  foreign?: boolean;
  /** The open elements its start closes. */
  closes?: Set<string>;
}
const PLAIN: TagRule = { void: false };
const RULES = new Map<string, TagRule>();
for (const name of new Set([...IMPLIES_CLOSE.keys(), ...VOID, ...FOREIGN, ...HTML_INTEGRATION])) {
  RULES.set(name, {
    void: VOID.has(name),
    foreign: FOREIGN.has(name) ? true : HTML_INTEGRATION.has(name) ? false : undefined,
    closes: IMPLIES_CLOSE.get(name),
  });
}

/**
 * htmlparser2's Parser as the page parser used it (HTML mode, lower-cased names, entities decoded, CDATA as a
 * comment), on htmlparser2's own Tokenizer: the same open, close and text events in the same order, with the
 * same implied ends (`<p>` closed by `<div>`, a stray `</p>` or `</br>`, everything still open at the end),
 * void elements and self-closing tags in svg and math. What it saves is the work the page parser throws away:
 * attributes are read (sliced, lower-cased, put in an object) only for the tags the handler asks for, and
 * text, such as a script's, is sliced out of the document only while the handler wants it.
 *
 * The open elements are kept innermost last, at most MAX_OPEN_ELEMENTS (see open-elements.ts): past that
 * the outermost are forgotten, as in the Parser the page parser had.
 */
export class LeanParser implements TokenizerCallbacks {
  private html = '';
  private readonly stack: string[] = [];
  /** Whether each foreign-content or integration element open is foreign (svg, math), innermost last. */
  private readonly foreign: boolean[] = [false];
  private tagName = '';
  private tagRule = PLAIN;
  private attributes: Record<string, string> | null = null;
  private attributeName = '';
  private attributeValue = '';

  constructor(private readonly handler: LeanHandler) {}

  parse(html: string): void {
    this.html = html;
    const tokenizer = new SkippingTokenizer({ xmlMode: false, decodeEntities: true }, this);
    tokenizer.write(html);
    tokenizer.end();
  }

  ontext(start: number, endIndex: number): void {
    if (this.handler.wantsText()) this.handler.ontext(this.html.slice(start, endIndex));
  }

  ontextentity(codepoint: number): void {
    if (this.handler.wantsText()) this.handler.ontext(String.fromCodePoint(codepoint));
  }

  onopentagname(start: number, endIndex: number): void {
    this.openTag(this.html.slice(start, endIndex).toLowerCase());
  }

  onopentagend(): void {
    this.endOpenTag();
  }

  onselfclosingtag(): void {
    // Only in foreign content does `/>` close the element; in HTML it is ignored.
    if (this.foreign[this.foreign.length - 1]) this.closeCurrentTag();
    else this.endOpenTag();
  }

  onclosetag(start: number, endIndex: number): void {
    const name = this.html.slice(start, endIndex).toLowerCase();
    const rule = RULES.get(name) ?? PLAIN;
    if (rule.foreign !== undefined) this.foreign.pop();
    if (!rule.void) {
      const at = this.stack.lastIndexOf(name);
      if (at !== -1) {
        while (this.stack.length > at) this.handler.onclosetag(this.stack.pop()!);
      } else if (name === 'p') {
        // A stray `</p>` is an empty paragraph.
        this.openTag('p');
        this.closeCurrentTag();
      }
    } else if (name === 'br') {
      // A stray `</br>` is a `<br>`.
      this.handler.onopentag('br', {});
      this.handler.onclosetag('br');
    }
  }

  onattribname(start: number, endIndex: number): void {
    if (this.attributes) this.attributeName = this.html.slice(start, endIndex).toLowerCase();
  }

  onattribdata(start: number, endIndex: number): void {
    if (this.attributes) this.attributeValue += this.html.slice(start, endIndex);
  }

  onattribentity(codepoint: number): void {
    if (this.attributes) this.attributeValue += String.fromCodePoint(codepoint);
  }

  onattribend(): void {
    // The first of repeated attributes counts.
    if (this.attributes && !Object.hasOwn(this.attributes, this.attributeName)) this.attributes[this.attributeName] = this.attributeValue;
    this.attributeValue = '';
  }

  onend(): void {
    while (this.stack.length > 0) this.handler.onclosetag(this.stack.pop()!);
  }

  oncdata(): void {}
  oncomment(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}

  private openTag(name: string): void {
    const rule = RULES.get(name) ?? PLAIN;
    this.tagName = name;
    this.tagRule = rule;
    const closes = rule.closes;
    if (closes) while (this.stack.length > 0 && closes.has(this.stack[this.stack.length - 1])) this.handler.onclosetag(this.stack.pop()!);
    if (!rule.void) {
      this.stack.push(name);
      if (rule.foreign !== undefined) this.foreign.push(rule.foreign);
    }
    this.attributes = this.handler.wantsAttributes(name) ? {} : null;
  }

  private endOpenTag(): void {
    const name = this.tagName;
    forgetOutermost(this.stack);
    forgetOutermost(this.foreign);
    this.handler.onopentag(name, this.attributes ?? {});
    this.attributes = null;
    if (this.tagRule.void) this.handler.onclosetag(name);
    this.tagName = '';
    this.tagRule = PLAIN;
  }

  private closeCurrentTag(): void {
    const name = this.tagName;
    this.endOpenTag();
    if (this.stack[this.stack.length - 1] === name) {
      this.stack.pop();
      this.handler.onclosetag(name);
    }
  }
}

function forgetOutermost(elements: unknown[]): void {
  if (elements.length > MAX_OPEN_ELEMENTS) elements.splice(0, elements.length - MAX_OPEN_ELEMENTS);
}
