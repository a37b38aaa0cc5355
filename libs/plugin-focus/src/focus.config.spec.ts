import { join } from 'node:path';
import { refreshDocTable, settingsTable } from '@crawler/config/testing';
import { FOCUS_CONFIG } from './focus.config';

describe('docs/configuration.md', () => {
  it("shows the focus plugin's settings with their doc comments and defaults (UPDATE_DOCS=1 rewrites the table)", () => {
    const table = settingsTable(join(__dirname, 'focus.config.ts'), FOCUS_CONFIG.schema);
    const [doc, fresh] = refreshDocTable(join(__dirname, '../../../docs/configuration.md'), 'plugin-focus', table);
    expect(doc).toBe(fresh);
  });
});
