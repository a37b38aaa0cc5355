import { join } from 'node:path';
import { refreshDocTable, settingsTable } from '@crawler/config/testing';
import { MONITOR_CONFIG } from './monitor.config';

describe('docs/configuration.md', () => {
  it("shows the monitor plugin's settings with their doc comments and defaults (UPDATE_DOCS=1 rewrites the table)", () => {
    const table = settingsTable(join(__dirname, 'monitor.config.ts'), MONITOR_CONFIG.schema);
    const [doc, fresh] = refreshDocTable(join(__dirname, '../../../docs/configuration.md'), 'plugin-monitor', table);
    expect(doc).toBe(fresh);
  });
});
