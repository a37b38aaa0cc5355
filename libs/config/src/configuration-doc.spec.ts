import { join } from 'node:path';
import { CrawlerConfigSchema } from './crawler-config';
import { refreshDocTable, settingsTable } from './testing';

describe('docs/configuration.md', () => {
  it('shows every setting with its doc comment and default (UPDATE_DOCS=1 rewrites the table)', () => {
    const table = settingsTable(join(__dirname, 'crawler-config.ts'), CrawlerConfigSchema);
    const [doc, fresh] = refreshDocTable(join(__dirname, '../../../docs/configuration.md'), '', table);
    expect(doc).toBe(fresh);
  });
});
