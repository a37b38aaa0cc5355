import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The house rules, checked on every source file: apps never import apps; contracts import no other
 * library; a service library never imports another service library (services meet only through queues);
 * nothing reaches into another app or library by relative path.
 */
const ROOT = join(__dirname, '../..');
const SERVICES = ['frontier', 'dns-resolver', 'downloader', 'content-parser', 'content-seen', 'url-extractor', 'url-filter', 'url-seen', 'control-plane'];

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

function imports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/(?:from|import|require\()\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
}

const ownerOf = (file: string) => file.split('/').slice(0, 2).join('/');

describe('import rules', () => {
  const files = [...sources('apps'), ...sources('libs')];

  it('finds the sources', () => expect(files.length).toBeGreaterThan(50));

  it('nothing reaches into another app or library by relative path', () => {
    const bad = files.flatMap((file) =>
      imports(file)
        .filter((spec) => spec.startsWith('.'))
        .filter((spec) => ownerOf(relative(ROOT, join(ROOT, file, '..', spec))) !== ownerOf(file))
        .map((spec) => `${file} → ${spec}`),
    );
    expect(bad).toEqual([]);
  });

  it('contracts import no other library of ours', () => {
    const bad = sources('libs/contracts').flatMap((file) => imports(file).filter((s) => s.startsWith('@crawler/')).map((s) => `${file} → ${s}`));
    expect(bad).toEqual([]);
  });

  it('a service library never imports another service library', () => {
    const bad = files
      .filter((file) => SERVICES.some((s) => file.startsWith(`libs/${s}/`)))
      .flatMap((file) => {
        const own = file.split('/')[1];
        return imports(file)
          .filter((spec) => SERVICES.some((s) => spec === `@crawler/${s}` && s !== own))
          .map((spec) => `${file} → ${spec}`);
      });
    expect(bad).toEqual([]);
  });

  it('each service app bootstraps only its own module', () => {
    for (const service of SERVICES) {
      const used = imports(`apps/${service}/src/main.ts`).filter((s) => s.startsWith('@crawler/'));
      expect(used.sort()).toEqual([`@crawler/${service}`, '@crawler/runtime'].sort());
    }
  });
});
