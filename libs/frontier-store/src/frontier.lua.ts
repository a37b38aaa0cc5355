import { join } from 'node:path';
import { readLuaScript } from '@crawler/redis';

/**
 * The Redis frontier's scripts, in ./lua: each is prelude.lua (the shared functions), a newline, then its
 * own file. Every key lives under the prefix ARGV[1]; KEYS[1] (`<prefix>init`) is declared only so that a
 * cluster client sends the script to the prefix's slot: on a Redis Cluster the prefix holds a hash tag, so
 * every key a script builds is in that slot too. The logic mirrors MemoryFrontierStore line for line; the
 * contract suite holds them to the same behaviour. prelude.lua lists the keys.
 */
const PRELUDE = readLuaScript(join(__dirname, 'lua/prelude.lua'));
const script = (name: string) => `${PRELUDE}\n${readLuaScript(join(__dirname, `lua/${name}.lua`))}`;

export const ENQUEUE = script('enqueue');
export const PROMOTE = script('promote');
export const CLAIM = script('claim');
export const COMPLETE = script('complete');
export const COUNTS = script('counts');
export const WORK = script('work');
export const STATS = script('stats');
export const AUDIT = script('audit');
export const RECLAIM = script('reclaim');
export const SET_CONTROLS = script('set-controls');
export const PRUNE = script('prune');
export const PURGE = script('purge');
export const TAKE_TURN = script('take-turn');
export const END_TURN = script('end-turn');
