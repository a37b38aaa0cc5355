import { randomBytes } from 'node:crypto';
import * as iconv from 'iconv-lite';
import { charsetFromContentType, decodeHtml, looksMisdecoded } from './charset-decoder';

const RUSSIAN =
  'Лев Николаевич Толстой — один из наиболее известных русских писателей и мыслителей, один из ' +
  'величайших в мире писателей-романистов. Участник обороны Севастополя. Просветитель, публицист, ' +
  'религиозный мыслитель, его авторитетное мнение послужило причиной возникновения нового ' +
  'религиозно-нравственного течения — толстовства.';
const JAPANESE = '日本語の文章です。これはシフトJISでエンコードされたテキストの例であり、文字コードの自動判定を' + '確認するためのものです。東京は日本の首都です。';
const POLISH = 'Położona nad Wisłą, Łazienki, przyjeżdżają tu tysiące turystów z całego świata.';
const FRENCH = 'Le café est délicieux. Voilà une phrase en français : très cher à Noël, ça coûte.';

/** A page with real-world markup around the text (markup dilutes byte statistics). */
function page(body: string, head = ''): string {
  return (
    `<!DOCTYPE html>\n<html><head>${head}<title>Page</title>` +
    '<link rel="stylesheet" href="/static/site.css"><script src="/static/app.js"></script></head>\n' +
    '<body><nav class="menu"><a href="/">Home</a> <a href="/about">About</a></nav>\n' +
    `<main><p>${body}</p></main></body></html>`
  );
}

const bytesOf = (text: string, charset: string): Uint8Array => iconv.encode(text, charset);

describe('decodeHtml', () => {
  describe('byte order mark', () => {
    it('decodes UTF-8 with a BOM and strips the BOM', () => {
      const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(page('Grüße, мир'))]);
      const r = decodeHtml(bytes, 'text/html; charset=windows-1252');
      expect(r).toMatchObject({ charset: 'UTF-8', source: 'bom' });
      expect(r.text.startsWith('<!DOCTYPE html>')).toBe(true);
      expect(r.text).toContain('Grüße, мир');
    });

    it.each(['utf-16le', 'utf-16be'])('decodes %s with a BOM, over any declaration', (charset) => {
      const bom = charset === 'utf-16le' ? [0xff, 0xfe] : [0xfe, 0xff];
      const bytes = Buffer.concat([Buffer.from(bom), bytesOf(page('Grüße, мир, 日本'), charset)]);
      const r = decodeHtml(bytes, 'text/html; charset=utf-8');
      expect(r).toEqual({
        text: page('Grüße, мир, 日本'),
        charset: charset === 'utf-16le' ? 'UTF-16LE' : 'UTF-16BE',
        source: 'bom',
      });
    });
  });

  describe('UTF-8 without a BOM', () => {
    it('honours a meta declaration', () => {
      const html = page('Grüße, мир', '<meta charset="utf-8">');
      expect(decodeHtml(Buffer.from(html))).toEqual({ text: html, charset: 'UTF-8', source: 'meta' });
    });

    it('detects undeclared UTF-8', () => {
      const html = page('Grüße, мир');
      expect(decodeHtml(Buffer.from(html))).toEqual({ text: html, charset: 'UTF-8', source: 'detected' });
    });

    it('keeps a declared UTF-8 whose last sequence was cut off by the body size limit', () => {
      const full = Buffer.from(page('мир'.repeat(50)));
      const truncated = full.subarray(0, full.indexOf(Buffer.from('мир')) + 3); // "м" plus half of "и"
      const r = decodeHtml(truncated, 'text/html; charset=utf-8');
      expect(r).toMatchObject({ charset: 'UTF-8', source: 'http' });
      expect(r.text.endsWith('м\uFFFD')).toBe(true);
    });

    it('decodes declared UTF-8 as a strict streaming TextDecoder does: valid, cut off, or invalid (2,000 random bodies)', () => {
      const pieces = ['a', ' <p>', '&amp;', 'é', 'ß', 'мир', '日本', '😀', '\u2028', '\uFEFF', '\u0000'];
      let seed = 7;
      const next = (n: number) => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return (seed >>> 8) % n;
      };
      for (let i = 0; i < 2000; i++) {
        // Not starting with U+FEFF: a byte order mark decides the charset before any declaration.
        const text = `<${Array.from({ length: next(40) }, () => pieces[next(pieces.length)]).join('')}`;
        let bytes = Buffer.from(text);
        if (i % 3 === 1) bytes = bytes.subarray(0, bytes.length - next(4)); // maybe cut inside a sequence
        if (i % 7 === 2) bytes = Buffer.concat([bytes, Buffer.from([0xff - next(0x40)]), Buffer.from('z')]); // maybe invalid
        const decoder = new TextDecoder('utf-8', { fatal: true });
        let expected: string | null;
        try {
          expected = decoder.decode(bytes, { stream: true });
          try {
            decoder.decode();
          } catch {
            expected += '\uFFFD';
          }
        } catch {
          expected = null; // not UTF-8: the declaration is overruled
        }
        const r = decodeHtml(bytes, 'text/html; charset=utf-8');
        if (expected === null) expect(r.source).not.toBe('http');
        else expect(r).toEqual({ text: expected, charset: 'UTF-8', source: 'http' });
      }
    });
  });

  describe('HTTP Content-Type', () => {
    it('decodes windows-1251 declared in the header', () => {
      const html = page(RUSSIAN);
      expect(decodeHtml(bytesOf(html, 'windows-1251'), 'text/html; charset=windows-1251')).toEqual({
        text: html,
        charset: 'windows-1251',
        source: 'http',
      });
    });

    it('takes precedence over a meta declaration', () => {
      const html = page(RUSSIAN, '<meta charset="koi8-r">');
      expect(decodeHtml(bytesOf(html, 'windows-1251'), 'text/html;charset="CP1251"')).toMatchObject({
        text: html,
        charset: 'windows-1251',
        source: 'http',
      });
    });

    it('resolves labels the WHATWG way and ignores unknown ones', () => {
      expect(charsetFromContentType('text/html; charset=ISO-8859-1')).toBe('windows-1252');
      expect(charsetFromContentType('text/html; charset=us-ascii')).toBe('windows-1252');
      expect(charsetFromContentType('text/html; Charset = "Shift-JIS"')).toBe('Shift_JIS');
      expect(charsetFromContentType('text/html; charset=utf-8, text/html; charset=koi8-r')).toBe('KOI8-R');
      expect(charsetFromContentType('text/html; charset=klingon')).toBeNull();
      expect(charsetFromContentType('text/html')).toBeNull();
      expect(charsetFromContentType(undefined)).toBeNull();
      // An unknown label counts as no label: the meta decides.
      const html = page(RUSSIAN, '<meta charset="windows-1251">');
      expect(decodeHtml(bytesOf(html, 'windows-1251'), 'text/html; charset=klingon').source).toBe('meta');
    });

    it('decodes a header-declared UTF-16 without a BOM', () => {
      const html = page('Grüße');
      expect(decodeHtml(bytesOf(html, 'utf-16le'), 'text/html; charset=utf-16')).toEqual({
        text: html,
        charset: 'UTF-16LE',
        source: 'http',
      });
    });

    it('decodes x-user-defined (which iconv-lite lacks) without throwing', () => {
      const r = decodeHtml(Uint8Array.from([0x41, 0x80, 0xff]), 'text/html; charset=x-user-defined');
      expect(r).toEqual({ text: 'A\uF780\uF7FF', charset: 'x-user-defined', source: 'http' });
    });
  });

  describe('meta prescan', () => {
    it('finds <meta charset>', () => {
      const html = page(RUSSIAN, '<meta charset="windows-1251">');
      const expected = { text: html, charset: 'windows-1251', source: 'meta' };
      expect(decodeHtml(bytesOf(html, 'windows-1251'))).toEqual(expected);
    });

    it('finds <meta http-equiv=Content-Type content="…charset=…">', () => {
      const html = page(RUSSIAN, '<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=windows-1251">');
      const expected = { text: html, charset: 'windows-1251', source: 'meta' };
      expect(decodeHtml(bytesOf(html, 'windows-1251'))).toEqual(expected);
    });

    it('turns a declared utf-16 into UTF-8 (the bytes are evidently ASCII-compatible)', () => {
      const html = page('Grüße', '<meta charset="utf-16">');
      expect(decodeHtml(Buffer.from(html))).toEqual({ text: html, charset: 'UTF-8', source: 'meta' });
    });

    it('survives the html-encoding-sniffer crash on a content value ending in "charset"', () => {
      const html = page(RUSSIAN, '<meta http-equiv="content-type" content="text/html; charset">');
      expect(decodeHtml(bytesOf(html, 'windows-1251'))).toMatchObject({ text: html, source: 'detected' });
    });
  });

  describe('detection', () => {
    it('decodes an undeclared windows-1251 Russian paragraph', () => {
      const r = decodeHtml(bytesOf(page(RUSSIAN), 'windows-1251'));
      expect(r).toMatchObject({ charset: 'windows-1251', source: 'detected' });
      expect(r.text).toBe(page(RUSSIAN));
      expect(r.text).toContain('Лев Николаевич Толстой — один из наиболее известных русских писателей');
    });

    it('decodes undeclared KOI8-R', () => {
      const html = page(RUSSIAN.replace(/—/g, '-')); // KOI8-R has no em dash
      expect(decodeHtml(bytesOf(html, 'koi8-r'))).toEqual({ text: html, charset: 'KOI8-R', source: 'detected' });
    });

    it('decodes undeclared Shift_JIS', () => {
      const r = decodeHtml(bytesOf(page(JAPANESE), 'shift_jis'));
      expect(r).toEqual({ text: page(JAPANESE), charset: 'Shift_JIS', source: 'detected' });
    });

    it('detects windows-1252 when a declared UTF-8 is not valid UTF-8', () => {
      const html = page(FRENCH, '<meta charset="utf-8">');
      const r = decodeHtml(bytesOf(html, 'windows-1252'), 'text/html; charset=utf-8');
      expect(r).toEqual({ text: html, charset: 'windows-1252', source: 'detected-over-declared' });
      expect(r.text).toContain('Le café est délicieux');
    });

    it('falls back to the meta declaration when the header wrongly says UTF-8', () => {
      const html = page(RUSSIAN, '<meta charset="windows-1251">');
      expect(decodeHtml(bytesOf(html, 'windows-1251'), 'text/html; charset=UTF-8')).toEqual({
        text: html,
        charset: 'windows-1251',
        source: 'meta',
      });
    });

    it('decodes as UTF-8 a page declared in a legacy charset whose bytes are valid UTF-8', () => {
      const html = page(FRENCH, '<meta charset="iso-8859-1">');
      expect(decodeHtml(Buffer.from(html), 'text/html; charset=ISO-8859-1')).toEqual({
        text: html,
        charset: 'UTF-8',
        source: 'detected-over-declared',
      });
    });
  });

  describe('a plainly wrong declaration', () => {
    it("decodes windows-1251 served as ISO-8859-1 as windows-1251 (the issue's example)", () => {
      const html = page(RUSSIAN, '<meta charset="iso-8859-1">');
      const r = decodeHtml(bytesOf(html, 'windows-1251'), 'text/html; charset=ISO-8859-1');
      expect(r).toEqual({ text: html, charset: 'windows-1251', source: 'detected-over-declared' });
    });

    it("decodes Shift_JIS served as ISO-8859-1 as Shift_JIS (the issue's example)", () => {
      const r = decodeHtml(bytesOf(page(JAPANESE), 'shift_jis'), 'text/html; charset=ISO-8859-1');
      expect(r).toEqual({ text: page(JAPANESE), charset: 'Shift_JIS', source: 'detected-over-declared' });
    });

    it('tells KOI8-R from windows-1251 by their case patterns, both ways', () => {
      const html = page(RUSSIAN.replace(/—/g, '-'));
      expect(decodeHtml(bytesOf(html, 'koi8-r'), 'text/html; charset=windows-1251')).toEqual({
        text: html,
        charset: 'KOI8-R',
        source: 'detected-over-declared',
      });
      expect(decodeHtml(bytesOf(html, 'windows-1251'), 'text/html; charset=koi8-r')).toEqual({
        text: html,
        charset: 'windows-1251',
        source: 'detected-over-declared',
      });
    });

    it('ignores a header-declared UTF-16 when the bytes hold no 0x00 (the meta decides)', () => {
      const html = page(RUSSIAN, '<meta charset="windows-1251">');
      expect(decodeHtml(bytesOf(html, 'windows-1251'), 'text/html; charset=utf-16')).toEqual({
        text: html,
        charset: 'windows-1251',
        source: 'meta',
      });
      const utf8 = page('Grüße, мир');
      expect(decodeHtml(Buffer.from(utf8), 'text/html; charset=utf-16le')).toEqual({
        text: utf8,
        charset: 'UTF-8',
        source: 'detected-over-declared',
      });
    });

    it('keeps a correct label that detection alone would get wrong', () => {
      // Czech in windows-1250: undeclared, chardet does not settle on it; declared, its decode is clean.
      const czech = 'Příliš žluťoučký kůň úpěl ďábelské ódy. Šťastný člověk říká „děkuji“ a usmívá se.';
      const html = page(czech);
      expect(decodeHtml(bytesOf(html, 'windows-1250'))).not.toMatchObject({ charset: 'windows-1250' });
      expect(decodeHtml(bytesOf(html, 'windows-1250'), 'text/html; charset=windows-1250')).toEqual({
        text: html,
        charset: 'windows-1250',
        source: 'http',
      });
    });

    it('keeps a correct label over a stray bad sequence (a body cut inside a character)', () => {
      const bytes = iconv.encode(page(JAPANESE), 'shift_jis');
      const cut = bytes.subarray(0, bytes.indexOf(iconv.encode('首都', 'shift_jis')) + 1);
      const r = decodeHtml(cut, 'text/html; charset=Shift_JIS');
      expect(r).toMatchObject({ charset: 'Shift_JIS', source: 'http' });
      expect(r.text.endsWith('日本の\uFFFD')).toBe(true);
    });

    it('keeps a correct label on text set in capitals', () => {
      const notice = 'ВНИМАНИЕ! АКЦИЯ ДЕЙСТВУЕТ ДО КОНЦА МЕСЯЦА. ЗВОНИТЕ ПРЯМО СЕЙЧАС. ГЛАВНАЯ | НОВОСТИ | КОНТАКТЫ';
      for (const charset of ['windows-1251', 'koi8-r']) {
        const r = decodeHtml(bytesOf(page(notice), charset), `text/html; charset=${charset}`);
        expect(r).toMatchObject({ text: page(notice), source: 'http' });
      }
    });
  });

  describe('looksMisdecoded', () => {
    it.each([
      ['French', FRENCH],
      ['Russian', RUSSIAN],
      ['Japanese', JAPANESE],
      ['Russian in capitals', 'ВНИМАНИЕ! АКЦИЯ ДЕЙСТВУЕТ ДО КОНЦА МЕСЯЦА. ЗВОНИТЕ ПРЯМО СЕЙЧАС.'],
      ['symbols next to words', 'Acme® Widget™ © 2024 — £9.99, 20°C ± 2°, «citation», l’été, col·lecció, nº 5'],
      ['one stray bad character', `${FRENCH} \uFFFD`],
      ['ASCII', 'Hello, world'],
    ])('answers false for natural text: %s', (_name, text) => {
      expect(looksMisdecoded(text)).toBe(false);
    });

    it.each([
      ['windows-1251 read as windows-1252 (accented letters only)', RUSSIAN, 'windows-1251', 'windows-1252'],
      ['windows-1251 read as KOI8-R (inverted case)', RUSSIAN.replace(/—/g, '-'), 'windows-1251', 'koi8-r'],
      ['windows-1252 read as windows-1251 (mixed scripts)', FRENCH, 'windows-1252', 'windows-1251'],
      ['ISO-8859-2 read as windows-1252 (symbols in words)', POLISH, 'iso-8859-2', 'windows-1252'],
      ['Shift_JIS read as EUC-JP (invalid sequences)', JAPANESE, 'shift_jis', 'euc-jp'],
      ['Shift_JIS read as windows-1252', JAPANESE, 'shift_jis', 'windows-1252'],
    ])('answers true for %s', (_name, text, encoding, readAs) => {
      expect(looksMisdecoded(iconv.decode(bytesOf(text, encoding), readAs))).toBe(true);
    });
  });

  describe('default', () => {
    it('uses windows-1252 for undeclared ASCII', () => {
      const html = page('Hello, world');
      expect(decodeHtml(Buffer.from(html))).toEqual({ text: html, charset: 'windows-1252', source: 'default' });
    });

    it('handles an empty body', () => {
      expect(decodeHtml(new Uint8Array(0))).toEqual({ text: '', charset: 'windows-1252', source: 'default' });
    });

    it('never throws on arbitrary bytes, whatever the declaration', () => {
      const labels = [undefined, 'text/html; charset=utf-8', 'text/html; charset=sjis', 'text/html; charset=utf-16be'];
      for (let i = 0; i < 200; i++) {
        const bytes = randomBytes(1 + (i % 97) * 13);
        expect(typeof decodeHtml(bytes, labels[i % labels.length]).text).toBe('string');
      }
    });
  });
});
