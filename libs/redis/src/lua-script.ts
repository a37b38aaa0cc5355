import { readFileSync } from 'node:fs';

/**
 * A Lua script kept in its own `.lua` file (read once, at module load). The file's leading `--` lines name
 * the script's KEYS and ARGV for its reader and are not sent; nor is the file's final newline. What Redis
 * runs, and so its SHA, is exactly the text in between. The build copies `libs/**\/*.lua` into dist.
 */
export function readLuaScript(path: string): string {
  return readFileSync(path, 'utf8')
    .replace(/^(--[^\n]*\n)+/, '')
    .replace(/\n$/, '');
}
