import { DEFAULT_BLOCKED_EXTENSIONS, isBlockedExtension, pathExtension, toExtensionSet } from './extension-filter';

describe('pathExtension', () => {
  it.each([
    ['http://e.com/a/Report.PDF', 'pdf'],
    ['http://e.com/a/archive.tar.gz', 'gz'],
    ['http://e.com/img.png?w=100#x', 'png'],
    ['http://e.com/file.pdf;v=2', 'pdf'],
    ['http://e.com/file.%70df', 'pdf'],
    ['http://e.com/v1.2/page', null],
    ['http://e.com/dir.zip/', null],
    ['http://e.com/', null],
    ['http://e.com/.well-known', null],
    ['http://e.com/name.', null],
    ['http://e.com/100%.x', 'x'],
    ['not a url', null],
  ])('%s → %s', (url, expected) => expect(pathExtension(url)).toBe(expected));

  it('accepts a URL object', () => expect(pathExtension(new URL('http://e.com/a.JPG'))).toBe('jpg'));
});

describe('isBlockedExtension', () => {
  it('blocks the default media/document/asset extensions', () => {
    for (const ext of ['png', 'jpg', 'mp4', 'zip', 'pdf', 'docx', 'woff2', 'exe', 'css', 'js']) {
      expect(isBlockedExtension(`http://e.com/f.${ext}`)).toBe(true);
    }
  });
  it('lets pages through', () => {
    for (const url of ['http://e.com/', 'http://e.com/a.html', 'http://e.com/a.php?x=1.pdf', 'http://e.com/sitemap.xml']) {
      expect(isBlockedExtension(url)).toBe(false);
    }
  });
  it('a plugin claim wins over the blocklist', () => {
    expect(isBlockedExtension('http://e.com/logo.PNG', DEFAULT_BLOCKED_EXTENSIONS, new Set(['png']))).toBe(false);
    expect(isBlockedExtension('http://e.com/logo.gif', DEFAULT_BLOCKED_EXTENSIONS, new Set(['png']))).toBe(true);
  });
  it('uses a configured list', () => {
    const blocked = toExtensionSet(['.XML', ' txt ', '']);
    expect([...blocked]).toEqual(['xml', 'txt']);
    expect(isBlockedExtension('http://e.com/a.xml', blocked)).toBe(true);
    expect(isBlockedExtension('http://e.com/a.png', blocked)).toBe(false);
  });
});
