import { looksScriptBuilt } from './script-built';

describe('looksScriptBuilt', () => {
  it('says yes to an empty app root with a bundle and no link', () => {
    expect(looksScriptBuilt('<html><body><div id="root"></div><script src="/main.js"></script></body></html>')).toBe(true);
    expect(looksScriptBuilt('<body><div id="app" class="x"> </div><script src=a.js></script>')).toBe(true);
    expect(looksScriptBuilt('<body><div id="__next"></div><script>var x</script></body>')).toBe(true);
  });

  it('says yes to a body of scripts and hardly any text, even with links written inside a script', () => {
    expect(looksScriptBuilt('<body><noscript>Enable JavaScript</noscript><script>document.write(\'<a href="/a">a</a>\')</script></body>')).toBe(true);
  });

  it('says no to a page with links of its own, without scripts, or with text', () => {
    expect(looksScriptBuilt('<body><div id="root"></div><a href="/x">x</a><script src="/m.js"></script></body>')).toBe(false);
    expect(looksScriptBuilt('<body><div id="root"></div></body>')).toBe(false);
    expect(looksScriptBuilt(`<body><p>${'An article with a lot of text in it. '.repeat(5)}</p><script src="/m.js"></script></body>`)).toBe(false);
  });
});
