import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CrawlerConfigSchema } from './crawler-config';
import { refreshDocTable, settingsTable } from './testing';

const LIBS = join(__dirname, '../..');

/** Every library's `src/*.settings.ts`, where the fields of the schema are declared with their doc comments. */
const settingsFiles = readdirSync(LIBS).flatMap((lib) =>
  readdirSync(join(LIBS, lib, 'src'))
    .filter((file) => file.endsWith('.settings.ts'))
    .map((file) => join(LIBS, lib, 'src', file)),
);

describe('docs/configuration.md', () => {
  it('shows every setting with its doc comment and default (UPDATE_DOCS=1 rewrites the table)', () => {
    expect(settingsFiles.length).toBeGreaterThan(5);
    const table = settingsTable(settingsFiles, CrawlerConfigSchema);
    const [doc, fresh] = refreshDocTable(join(__dirname, '../../../docs/configuration.md'), '', table);
    expect(doc).toBe(fresh);
  });
});
