import { join } from 'node:path';
import { refreshDocTable, settingsTable } from '@crawler/config/testing';
import { PNG_CONFIG } from './png.config';

describe('docs/configuration.md', () => {
  it("shows the png plugin's settings with their doc comments and defaults (UPDATE_DOCS=1 rewrites the table)", () => {
    const table = settingsTable(join(__dirname, 'png.config.ts'), PNG_CONFIG.schema);
    const [doc, fresh] = refreshDocTable(join(__dirname, '../../../docs/configuration.md'), 'plugin-png', table);
    expect(doc).toBe(fresh);
  });
});
