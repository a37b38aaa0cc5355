import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { readLuaScript } from '@crawler/redis';

/** Redis commands of a run from one place: a script (its calls and the commands it ran) or a plain command. */
export interface CommandSource {
  /** `frontier-store:enqueue`, `bullmq:moveToFinished`, or a command's name (`hgetall`). */
  where: string;
  /** Calls of the script or the command (a script's own commands are not calls). */
  calls: number;
  /** Commands Redis counted: the call and, for a script, every command it ran. */
  commands: number;
}

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/**
 * The name of every script the crawl sends, by its SHA1 (what EVALSHA names it by): ours, each `.lua` under
 * `libsDir` as read by readLuaScript, the frontier's also behind its prelude (frontier.lua.ts), named
 * `<lib>:<file>`; and BullMQ's, from its package's compiled scripts, named `bullmq:<script>`.
 */
export function scriptNames(libsDir: string): Map<string, string> {
  const names = new Map<string, string>();
  const luaFiles = (dir: string): string[] =>
    readdirSync(dir).flatMap((entry) => {
      const path = join(dir, entry);
      return statSync(path).isDirectory() ? luaFiles(path) : entry.endsWith('.lua') ? [path] : [];
    });
  for (const path of luaFiles(libsDir)) {
    const name = `${relative(libsDir, path).split('/')[0]}:${path.replace(/^.*\//, '').replace(/\.lua$/, '')}`;
    const text = readLuaScript(path);
    names.set(sha1(text), name);
    const prelude = join(dirname(path), 'prelude.lua');
    if (path !== prelude && statSync(prelude, { throwIfNoEntry: false })) names.set(sha1(`${readLuaScript(prelude)}\n${text}`), name);
  }
  const bullmq = join(dirname(require.resolve('bullmq/package.json')), 'dist/cjs/scripts');
  for (const file of readdirSync(bullmq).filter((f) => /-\d+\.js$/.test(f))) {
    for (const script of Object.values(require(join(bullmq, file)) as Record<string, { name?: string; content?: string }>)) {
      if (script?.content) names.set(sha1(script.content), `bullmq:${script.name}`);
    }
  }
  return names;
}

/**
 * Tells where each command a server ran came from, as MONITOR reports them in the order it ran them: a command
 * a script ran (`fromScript`) counts against the script call before it on the same server.
 */
export class CommandAttribution {
  private readonly sources = new Map<string, CommandSource>();
  /** The script call each server is running, by server. */
  private readonly running = new Map<string, CommandSource>();

  constructor(private readonly names: Map<string, string>) {}

  see(server: string, args: string[], fromScript: boolean): void {
    const running = this.running.get(server);
    if (fromScript) {
      this.count(running?.where ?? 'a script not seen called', 0);
      return;
    }
    const command = args[0].toLowerCase();
    const where =
      command === 'evalsha'
        ? (this.names.get(args[1]) ?? `script ${args[1].slice(0, 8)}`)
        : command === 'eval'
          ? (this.names.get(sha1(unescapeMonitor(args[1]))) ?? 'eval')
          : command;
    const source = this.count(where, 1);
    if (command === 'evalsha' || command === 'eval') this.running.set(server, source);
    else this.running.delete(server);
  }

  /** Every source, the most commands first. */
  result(): CommandSource[] {
    return [...this.sources.values()].sort((a, b) => b.commands - a.commands);
  }

  private count(where: string, calls: number): CommandSource {
    const source = this.sources.get(where) ?? { where, calls: 0, commands: 0 };
    source.calls += calls;
    source.commands += 1;
    this.sources.set(where, source);
    return source;
  }
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b', '\\': '\\', '"': '"' };

/** An argument as MONITOR quotes it (a line break as `\n`, a byte outside printable ASCII as `\xHH`), as it was sent. */
export function unescapeMonitor(quoted: string): string {
  const latin1 = quoted.replace(/\\(x[0-9a-f]{2}|.)/g, (_, e: string) => (e.length === 3 ? String.fromCharCode(Number.parseInt(e.slice(1), 16)) : (ESCAPES[e] ?? e)));
  return Buffer.from(latin1, 'latin1').toString('utf8');
}
