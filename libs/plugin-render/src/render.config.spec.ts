import { join } from 'node:path';
import { refreshDocTable, settingsTable } from '@crawler/config/testing';
import { RENDER_CONFIG } from './render.config';

describe('docs/configuration.md', () => {
  it("shows the render plugin's settings with their doc comments and defaults (UPDATE_DOCS=1 rewrites the table)", () => {
    const table = settingsTable(join(__dirname, 'render.config.ts'), RENDER_CONFIG.schema);
    const [doc, fresh] = refreshDocTable(join(__dirname, '../../../docs/configuration.md'), 'plugin-render', table);
    expect(doc).toBe(fresh);
  });
});
