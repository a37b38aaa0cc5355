import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLuaScript } from './lua-script';

describe('readLuaScript', () => {
  it('sends the text between the header comment and the final newline, byte for byte', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lua-'));
    const file = join(dir, 'script.lua');
    writeFileSync(file, "-- KEYS[1] a list.\n-- ARGV[1] an item.\n\n  -- kept: not part of the header\n  return redis.call('RPUSH', KEYS[1], '\t')\n");
    expect(readLuaScript(file)).toBe("\n  -- kept: not part of the header\n  return redis.call('RPUSH', KEYS[1], '\t')");
    rmSync(dir, { recursive: true });
  });
});
