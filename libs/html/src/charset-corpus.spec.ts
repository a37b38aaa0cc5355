/**
 * decodeHtml over a corpus of realistic pages: a few sentences of real text in each language, inside
 * ordinary markup, encoded in the test with iconv-lite, and served four ways: (a) labelled correctly in
 * the Content-Type header, (b) labelled correctly in a `<meta>`, (c) labelled wrongly, in the header or in
 * a `<meta>`, (d) not labelled. Every case asserts the charset decodeHtml answers, how it decided (source),
 * phrases the text must contain, and the whole decoded page.
 *
 * Correct labels are kept: their decoded text shows no mojibake, so the "plainly wrong declaration" check
 * (looksMisdecoded) has nothing to act on.
 *
 * Wrong labels are overruled (source 'detected-over-declared') when the declared decode shows mojibake and
 * detection ranks a charset above the declared one that decodes cleanly: the examples (windows-1251
 * and Shift_JIS served as ISO-8859-1) and most realistic mistakes. Genuinely undecidable without a
 * language model, and pinned as what decodeHtml does (the label is kept, and so is its mojibake):
 * - EUC-KR served as GB18030, and GB18030 served as EUC-KR: every byte pair is valid in the other table,
 *   so the text decodes into clean, meaningless Chinese or Korean;
 * - a short ISO-8859-2 Czech text served as ISO-8859-1: read as windows-1252 it is still Latin letters
 *   ("Vítejte v Brnì"). The longer Czech page is caught: its š and ž become ¹ and ¾ inside words.
 * UTF-16 pages carry a BOM here, and the BOM decides whatever the label says (source 'bom').
 */
import * as iconv from 'iconv-lite';
import { CharsetSource, decodeHtml } from './charset-decoder';

interface WrongLabel {
  /** The label, as sent (in the header, or in a `<meta charset>` when `inMeta`). */
  label: string;
  inMeta?: boolean;
  /** What decodeHtml answers; the sample's own charset unless the case is undecidable (see the header). */
  charset?: string;
  source?: CharsetSource;
}

interface Sample {
  language: string;
  /** WHATWG name of the encoding the page is in, as decodeHtml reports it. */
  charset: string;
  /** The label the page declares (and iconv-lite encodes with, unless `encoding` is given). */
  label: string;
  /** iconv-lite's encoding when the label is an alias it takes literally (ISO-8859-1 means windows-1252). */
  encoding?: string;
  text: string;
  /** Phrases typed independently of the text above: the decoded page must contain them. */
  phrases: string[];
  wrong: WrongLabel[];
  /** The meta element's form: `<meta charset>` or the http-equiv pragma. */
  pragma?: boolean;
}

const FRENCH =
  'Le château de Versailles est l’un des monuments les plus visités de France. Construit à l’origine ' +
  'comme pavillon de chasse, il devint la résidence principale du roi Louis XIV. Les jardins, dessinés ' +
  'par André Le Nôtre, s’étendent sur plus de huit cents hectares. Chaque année, des millions de ' +
  'visiteurs découvrent la galerie des Glaces, chef-d’œuvre de l’art français.';
const GERMAN =
  'Die Straße führt über die Brücke zum Schloss. Im Frühling blühen die Obstbäume, und die Bäuerinnen ' +
  'verkaufen frische Äpfel auf dem Wochenmarkt. Größere Städte wie München oder Köln ziehen jedes Jahr ' +
  'viele Besucher an. „Grüß Gott“, sagt man in Bayern, wenn man einander begegnet.';
const POLISH =
  'Warszawa jest stolicą i największym miastem Polski. Położona nad Wisłą, liczy około półtora miliona ' +
  'mieszkańców. W mieście znajduje się wiele zabytków, między innymi Zamek Królewski i Łazienki. Każdego ' +
  'roku przyjeżdżają tu tysiące turystów z całego świata.';
const CZECH =
  'Praha je hlavní město České republiky a leží na řece Vltavě. Pražský hrad je největší hradní komplex ' +
  'na světě. Karlův most spojuje Staré Město s Malou Stranou a každý den po něm projdou tisíce lidí. ' +
  'Příliš žluťoučký kůň úpěl ďábelské ódy.';
/** Hyphens, not dashes: KOI8-R has no em dash. */
const RUSSIAN =
  'Москва - столица России, крупнейший по численности населения город страны. Город расположен на реке ' +
  'Москве в центре Восточно-Европейской равнины. Московский Кремль и Красная площадь входят в список ' +
  'объектов Всемирного наследия ЮНЕСКО. Ежегодно город посещают миллионы туристов.';
const JAPANESE =
  '東京は日本の首都であり、世界有数の大都市です。江戸時代には将軍の居城が置かれ、明治維新の後に東京と' +
  '改められました。現在では政治、経済、文化の中心として多くの人々が暮らしています。';
const CHINESE =
  '北京是中华人民共和国的首都，也是全国的政治、文化和国际交往中心。北京有三千多年的建城史，拥有故宫、' + '天坛、长城等众多名胜古迹。每年都有大量游客来到这里参观。';
const KOREAN =
  '서울특별시는 대한민국의 수도이자 최대 도시이다. 한강을 중심으로 강북과 강남으로 나뉘며, 조선 시대부터 ' +
  '나라의 중심지였다. 경복궁과 창덕궁 같은 궁궐이 남아 있어 많은 관광객이 찾는다.';
const MIXED = `${GERMAN} ${RUSSIAN} ${JAPANESE}`;

const CORPUS: Sample[] = [
  {
    language: 'mixed German, Russian and Japanese',
    charset: 'UTF-8',
    label: 'utf-8',
    text: MIXED,
    phrases: ['Grüß Gott', 'Московский Кремль', '東京は日本の首都'],
    wrong: [{ label: 'ISO-8859-1' }, { label: 'windows-1251', inMeta: true }, { label: 'utf-16' }],
  },
  {
    language: 'French',
    charset: 'windows-1252',
    label: 'windows-1252',
    text: FRENCH,
    phrases: ['château de Versailles', 'André Le Nôtre', 'chef-d’œuvre'],
    wrong: [{ label: 'iso-8859-2' }, { label: 'windows-1251', inMeta: true }],
  },
  {
    language: 'German',
    charset: 'windows-1252',
    label: 'iso-8859-1',
    encoding: 'windows-1252',
    text: GERMAN,
    phrases: ['Die Straße führt über die Brücke', 'Größere Städte wie München oder Köln'],
    wrong: [{ label: 'koi8-r' }, { label: 'windows-1251', inMeta: true }],
    pragma: true,
  },
  {
    language: 'Polish',
    charset: 'ISO-8859-2',
    label: 'iso-8859-2',
    text: POLISH,
    phrases: ['Położona nad Wisłą', 'Każdego roku przyjeżdżają'],
    wrong: [{ label: 'ISO-8859-1' }, { label: 'windows-1251', inMeta: true }],
  },
  {
    language: 'Czech',
    charset: 'ISO-8859-2',
    label: 'iso-8859-2',
    text: CZECH,
    phrases: ['leží na řece Vltavě', 'Příliš žluťoučký kůň'],
    wrong: [{ label: 'ISO-8859-1' }, { label: 'windows-1251', inMeta: true }],
    pragma: true,
  },
  {
    language: 'Russian',
    charset: 'windows-1251',
    label: 'windows-1251',
    text: RUSSIAN,
    phrases: ['Москва - столица России', 'Московский Кремль и Красная площадь'],
    wrong: [{ label: 'ISO-8859-1' }, { label: 'koi8-r', inMeta: true }],
  },
  {
    language: 'Russian',
    charset: 'KOI8-R',
    label: 'koi8-r',
    text: RUSSIAN,
    phrases: ['Москва - столица России', 'Московский Кремль и Красная площадь'],
    wrong: [{ label: 'windows-1251' }, { label: 'ISO-8859-1', inMeta: true }],
    pragma: true,
  },
  {
    language: 'Japanese',
    charset: 'Shift_JIS',
    label: 'shift_jis',
    text: JAPANESE,
    phrases: ['東京は日本の首都であり', '明治維新'],
    wrong: [{ label: 'ISO-8859-1' }, { label: 'euc-jp', inMeta: true }],
  },
  {
    language: 'Japanese',
    charset: 'EUC-JP',
    label: 'euc-jp',
    text: JAPANESE,
    phrases: ['東京は日本の首都であり', '明治維新'],
    wrong: [{ label: 'shift_jis' }, { label: 'ISO-8859-1', inMeta: true }],
    pragma: true,
  },
  {
    language: 'Chinese',
    charset: 'gb18030',
    label: 'gb18030',
    text: CHINESE,
    phrases: ['北京是中华人民共和国的首都', '名胜古迹'],
    wrong: [
      { label: 'ISO-8859-1' },
      { label: 'big5', inMeta: true },
      // Undecidable (see the header): the GB18030 pairs are all valid EUC-KR, so the label is kept.
      { label: 'euc-kr', charset: 'EUC-KR', source: 'http' },
    ],
  },
  {
    language: 'Korean',
    charset: 'EUC-KR',
    label: 'euc-kr',
    text: KOREAN,
    phrases: ['서울특별시는 대한민국의 수도', '경복궁과 창덕궁'],
    wrong: [
      { label: 'ISO-8859-1' },
      { label: 'shift_jis', inMeta: true },
      // Undecidable (see the header): the EUC-KR pairs are all valid GB18030, so the label is kept.
      { label: 'gb18030', charset: 'gb18030', source: 'http' },
    ],
    pragma: true,
  },
];

/** A page with real-world markup around the text (markup dilutes byte statistics). */
function page(text: string, meta = ''): string {
  return (
    `<!DOCTYPE html>\n<html lang="x"><head>${meta}<meta name="viewport" content="width=device-width">` +
    '<title>Page</title><link rel="stylesheet" href="/static/site.css"><script src="/static/app.js"></script>' +
    '</head>\n<body><nav class="menu"><a href="/">Home</a> <a href="/about">About</a></nav>\n' +
    `<main><article><h1>${text.slice(0, text.indexOf(' ', 12))}</h1><p>${text}</p></article></main>\n` +
    '<footer><a href="/contact">Contact</a> | <a href="/privacy">Privacy</a></footer></body></html>'
  );
}

function metaFor(label: string, pragma = false): string {
  if (!pragma) return `<meta charset="${label}">`;
  return `<meta http-equiv="Content-Type" content="text/html; charset=${label}">`;
}

const header = (label: string) => `text/html; charset=${label}`;

describe('charset corpus', () => {
  describe.each(CORPUS)('$language in $charset', (sample) => {
    const { charset, label, text, phrases, pragma } = sample;
    const encode = (html: string): Buffer => iconv.encode(html, sample.encoding ?? label);

    function expectDecoded(r: ReturnType<typeof decodeHtml>, html: string, source: CharsetSource): void {
      expect({ charset: r.charset, source: r.source }).toEqual({ charset, source });
      for (const phrase of phrases) expect(r.text).toContain(phrase);
      expect(r.text).toBe(html);
    }

    it('is encodable in its charset (the corpus itself is sound)', () => {
      expect(iconv.decode(encode(text), sample.encoding ?? label)).toBe(text);
      for (const phrase of phrases) expect(text).toContain(phrase);
    });

    it(`(a) labelled ${label} in the Content-Type header: decodes as ${charset} (http)`, () => {
      const html = page(text);
      expectDecoded(decodeHtml(encode(html), header(label)), html, 'http');
    });

    it(`(b) labelled ${label} in a <meta>: decodes as ${charset} (meta)`, () => {
      const html = page(text, metaFor(label, pragma));
      expectDecoded(decodeHtml(encode(html)), html, 'meta');
    });

    it.each(sample.wrong.map((w) => [w.inMeta ? 'a <meta>' : 'the header', w.label, w] as const))('(c) labelled wrongly in %s as %s', (_where, _label, w) => {
      const html = w.inMeta ? page(text, metaFor(w.label, pragma)) : page(text);
      const r = decodeHtml(encode(html), w.inMeta ? undefined : header(w.label));
      if (w.charset === undefined) {
        expectDecoded(r, html, 'detected-over-declared');
      } else {
        // An undecidable case (see the header): the label is kept, and so is its mojibake.
        expect({ charset: r.charset, source: r.source }).toEqual({ charset: w.charset, source: w.source });
        expect(r.text).toBe(iconv.decode(encode(html), w.charset));
        expect(r.text).not.toContain(phrases[0]);
      }
    });

    it(`(d) not labelled: detects ${charset} (detected)`, () => {
      const html = page(text);
      expectDecoded(decodeHtml(encode(html)), html, 'detected');
    });
  });

  describe.each([
    ['UTF-16LE', 'utf-16le', [0xff, 0xfe]],
    ['UTF-16BE', 'utf-16be', [0xfe, 0xff]],
  ] as const)('mixed German, Russian and Japanese in %s with a BOM', (charset, label, bom) => {
    const html = page(MIXED);
    const bytes = Buffer.concat([Buffer.from(bom), iconv.encode(html, label)]);
    const expected = { text: html, charset, source: 'bom' };

    it(`(a) labelled ${label} in the header: the BOM decides`, () => {
      expect(decodeHtml(bytes, header(label))).toEqual(expected);
    });

    it('(b) labelled utf-16 in a <meta>: the BOM decides (the prescan cannot read UTF-16 anyway)', () => {
      const withMeta = page(MIXED, metaFor('utf-16'));
      const r = decodeHtml(Buffer.concat([Buffer.from(bom), iconv.encode(withMeta, label)]));
      expect(r).toEqual({ text: withMeta, charset, source: 'bom' });
    });

    it('(c) labelled wrongly (windows-1252) in the header: the BOM decides', () => {
      expect(decodeHtml(bytes, header('windows-1252'))).toEqual(expected);
    });

    it('(d) not labelled: the BOM decides', () => {
      expect(decodeHtml(bytes)).toEqual(expected);
      expect(decodeHtml(bytes).text).toContain('Московский Кремль');
    });
  });

  it('keeps windows-1252 for a short ISO-8859-2 Czech text served as ISO-8859-1 (undecidable: valid in both)', () => {
    // "Vítejte v Brně" reads "Vítejte v Brnì" in windows-1252: plausible Latin letters, no evidence of a wrong
    // table. The longer Czech page above has enough š/ž (read as ¹/¾ inside words) to be caught.
    const html = page('Vítejte v Brně');
    const r = decodeHtml(iconv.encode(html, 'iso-8859-2'), header('ISO-8859-1'));
    expect(r).toEqual({ text: page('Vítejte v Brnì'), charset: 'windows-1252', source: 'http' });
  });
});
