import { Parser } from 'htmlparser2';
import { LeanParser } from './lean-parser';
import { forgetOutermostElements } from './open-elements';

type Event = [kind: 'open', name: string, attributes: Record<string, string>] | [kind: 'close', name: string] | [kind: 'text', data: string];

/** htmlparser2's Parser as the page parser used it, open elements bounded the same way. */
function parserEvents(html: string): Event[] {
  const events: Event[] = [];
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        forgetOutermostElements(parser);
        events.push(['open', name, { ...attributes }]);
      },
      onclosetag: (name) => events.push(['close', name]),
      ontext: (data) => events.push(['text', data]),
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  return events;
}

function leanEvents(html: string, wants: { attributes?: (name: string) => boolean; text?: () => boolean } = {}): Event[] {
  const events: Event[] = [];
  new LeanParser({
    wantsAttributes: wants.attributes ?? (() => true),
    wantsText: wants.text ?? (() => true),
    onopentag: (name, attributes) => events.push(['open', name, { ...attributes }]),
    onclosetag: (name) => events.push(['close', name]),
    ontext: (data) => events.push(['text', data]),
  }).parse(html);
  return events;
}

/** Tag soup from a seed: the constructs whose handling the Parser's tree rules decide. */
function tagSoup(seed: number, pieces: number): string {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) >>> 0;
    return state / 2 ** 32;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const names = [
    'p',
    'div',
    'li',
    'ul',
    'td',
    'tr',
    'table',
    'tbody',
    'option',
    'select',
    'dd',
    'dt',
    'h2',
    'a',
    'span',
    'B',
    'svg',
    'math',
    'title',
    'desc',
    'mi',
    'foreignObject',
    'br',
    'img',
    'input',
    'body',
    'head',
    'link',
    'noscript',
    'template',
    'script',
    'style',
    'textarea',
    'xmp',
    'iframe',
  ];
  const attribute = () =>
    pick([
      ' href="/x?a=1&amp;b=2"',
      " HREF='/Y'",
      ' rel=NoFollow',
      ' lang="en"',
      ' checked',
      ' data-x="&lt;&#x41;&quot;"',
      ' href=/un&copy;quoted',
      ' a=1 a=2',
      ' class="c d"',
    ]);
  const out: string[] = [];
  for (let i = 0; i < pieces; i++) {
    const name = pick(names);
    const r = next();
    if (r < 0.35) out.push(`<${name}${next() < 0.5 ? attribute() : ''}${next() < 0.3 ? attribute() : ''}${next() < 0.1 ? '/' : ''}>`);
    else if (r < 0.6) out.push(`</${name}>`);
    else if (r < 0.9)
      out.push(
        pick([
          'text ',
          'Caf&eacute; ',
          '&amp;&lt;',
          ' \n ',
          'a&b ',
          '&notit; ',
          'x<y ',
          'if (a < b) ',
          '</ ',
          '<!-- c -->',
          '<![CDATA[d]]>',
          '<!doctype html>',
          '<?pi?>',
        ]),
      );
    else out.push(pick(['<', '&', '"', "'", '</', '<a href="/cut']));
  }
  return out.join('');
}

describe('LeanParser', () => {
  it("reports exactly the events of htmlparser2's Parser, on tag soup of every construct", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const html = tagSoup(seed, 200);
      expect({ seed, events: leanEvents(html) }).toEqual({ seed, events: parserEvents(html) });
    }
  });

  it('bounds the open elements as the Parser bounded by forgetOutermostElements', () => {
    const html = `${'<div><svg><span>'.repeat(400)}text${'</span></svg></div>'.repeat(400)}<p>after</p>`;
    expect(leanEvents(html)).toEqual(parserEvents(html));
  });

  it('reads runs that end far from the next `<`, `&` or closing quote as the Parser does, searching each character once', () => {
    const entities = 'x&amp;'.repeat(10_000);
    const indexOf = String.prototype.indexOf;
    const runs = '<b>x</b><i title="y">z</i>'.repeat(5_000); // and many short runs with no `&` after them
    for (const html of [`<p>${entities}`, `<a href="${entities}`, `<a title='${entities}'>t</a>${entities}<b>`, runs]) {
      let searched = 0; // characters indexOf read: once per stop character found, not once a run
      const spy = jest.spyOn(String.prototype, 'indexOf').mockImplementation(function (this: string, search: string, from?: number) {
        const at = indexOf.call(this, search, from);
        searched += (at < 0 ? this.length : at) - (from ?? 0);
        return at;
      });
      let events: Event[];
      try {
        events = leanEvents(html);
      } finally {
        spy.mockRestore();
      }
      expect(searched).toBeLessThan(3 * html.length);
      expect(events).toEqual(parserEvents(html));
    }
  });

  it('reads the attributes of the tags asked for only, and text only while it is wanted', () => {
    let wanted = true;
    const events = leanEvents('<a href="/x">one</a><div class="c">two<b>three</b></div>', {
      attributes: (name) => name === 'a',
      text: () => {
        const now = wanted;
        wanted = !wanted;
        return now;
      },
    });
    expect(events).toEqual([
      ['open', 'a', { href: '/x' }],
      ['text', 'one'],
      ['close', 'a'],
      ['open', 'div', {}],
      ['open', 'b', {}],
      ['text', 'three'],
      ['close', 'b'],
      ['close', 'div'],
    ]);
  });
});
