import { mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@crawler/config';
import type { Logger } from '@crawler/logging';
import { DomainBlocklist, parseDomainList } from './domain-blocklist';

const dir = mkdtempSync(join(tmpdir(), 'blocklist-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function setup(text: string) {
  const file = join(dir, `list-${++n}.txt`);
  writeFileSync(file, text);
  const logger = { info: jest.fn(), warn: jest.fn() };
  const list = new DomainBlocklist(file, 100, logger as unknown as Logger);
  return { file, logger, list };
}

/** Replaces the file the way operators should: write a new one, rename it over. */
function replace(file: string, text: string) {
  writeFileSync(`${file}.new`, text);
  renameSync(`${file}.new`, file);
}

describe('parseDomainList', () => {
  it('reads one domain a line, # comments, blank lines, wildcard and leading-dot forms', () => {
    const { domains, invalid } = parseDomainList('# header\n\nBad.Test\n*.worse.test   # comment\r\n.dot.test\n  spaced.test  \nbücher.test\n');
    expect([...domains]).toEqual(['bad.test', 'worse.test', 'dot.test', 'spaced.test', 'xn--bcher-kva.test']);
    expect(invalid).toEqual([]);
  });

  it('reports lines that are not domain names, with their numbers', () => {
    const { domains, invalid } = parseDomainList('ok.test\nhttp://x.test/path\nhost.test:8080\n');
    expect([...domains]).toEqual(['ok.test']);
    expect(invalid).toEqual([
      { line: 2, text: 'http://x.test/path' },
      { line: 3, text: 'host.test:8080' },
    ]);
  });

  it('reads an empty file as an empty list', () => expect(parseDomainList('').domains.size).toBe(0));
});

describe('DomainBlocklist', () => {
  it('blocks listed domains and their subdomains once loaded', () => {
    const { list, logger } = setup('bad.test\n');
    expect(list.blocks('bad.test')).toBe(false);
    list.load();
    expect(list.size).toBe(1);
    expect(list.blocks('bad.test')).toBe(true);
    expect(list.blocks('www.bad.test')).toBe(true);
    expect(list.blocks('notbad.test')).toBe(false);
    expect(logger.info).toHaveBeenCalledWith(expect.objectContaining({ domains: 1 }), 'domain blocklist loaded');
  });

  it('refuses a missing file or a bad line at boot with an error naming URL_FILTER_BLOCKLIST_FILE', () => {
    const missing = new DomainBlocklist(join(dir, 'missing.txt'), 100, { info: jest.fn(), warn: jest.fn() } as unknown as Logger);
    expect(() => missing.load()).toThrow(ConfigError);
    expect(() => missing.load()).toThrow(/^invalid configuration:\n {2}URL_FILTER_BLOCKLIST_FILE: cannot read .*missing\.txt: ENOENT/);
    const { list } = setup('ok.test\nhttps://bad/\n');
    expect(() => list.load()).toThrow(/URL_FILTER_BLOCKLIST_FILE: .* has lines that are not domain names: line 2 "https:\/\/bad\/"/);
  });

  it('reloads a changed file, and does nothing for an unchanged one', async () => {
    const { file, list } = setup('a.test\n');
    list.load();
    expect(await list.reload()).toBe(false);
    replace(file, 'b.test\nc.test\n');
    expect(await list.reload()).toBe(true);
    expect([list.blocks('a.test'), list.blocks('b.test'), list.blocks('c.test')]).toEqual([false, true, true]);
    expect(await list.reload()).toBe(false);
  });

  it('keeps the previous list, with one warning, while the file is missing or bad, then takes the fixed one', async () => {
    const { file, list, logger } = setup('a.test\n');
    list.load();
    unlinkSync(file);
    expect(await list.reload()).toBe(false);
    expect(await list.reload()).toBe(false);
    expect(list.blocks('a.test')).toBe(true);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0][1]).toMatch(/cannot be read: ENOENT.*the previous list \(1 domains\) stays in force/);

    writeFileSync(file, 'b.test\nnot a domain\n');
    expect(await list.reload()).toBe(false);
    expect(list.blocks('a.test')).toBe(true);
    expect(list.blocks('b.test')).toBe(false);
    expect(logger.warn).toHaveBeenCalledTimes(2);
    expect(logger.warn.mock.calls[1][1]).toMatch(/line 2 "not a domain"/);

    replace(file, 'b.test\n');
    expect(await list.reload()).toBe(true);
    expect([list.blocks('a.test'), list.blocks('b.test')]).toEqual([false, true]);
  });

  it('shares one check between concurrent reloads', async () => {
    const { file, list } = setup('a.test\n');
    list.load();
    replace(file, 'b.test\n');
    const answers = await Promise.all([list.reload(), list.reload(), list.reload()]);
    expect(answers).toEqual([true, true, true]);
  });

  it('checks on a timer until stopped', async () => {
    const { file, list } = setup('a.test\n');
    list.load();
    list.start();
    list.start(); // idempotent
    try {
      replace(file, 'b.test\n');
      const deadline = Date.now() + 5000;
      while (!list.blocks('b.test') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(list.blocks('b.test')).toBe(true);
    } finally {
      list.stop();
    }
    replace(file, 'c.test\n');
    await new Promise((r) => setTimeout(r, 300));
    expect(list.blocks('c.test')).toBe(false);
  });
});
