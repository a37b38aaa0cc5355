import { execFile } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from './temp-dirs';

const run = promisify(execFile);

/**
 * Where PostgreSQL's server programs are (initdb, pg_ctl): PG_BIN, else the newest Debian install under
 * /usr/lib/postgresql/<version>/bin; null when there are none (a test that needs them then skips, saying so).
 */
export function postgresBinaries(): string | null {
  const candidates = process.env.PG_BIN
    ? [process.env.PG_BIN]
    : existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .sort((a, b) => Number(b) - Number(a))
          .map((version) => join('/usr/lib/postgresql', version, 'bin'))
      : [];
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ?? null;
}

/**
 * A PostgreSQL server a test owns (a cluster of its own in a temp directory, on `port`), for tests that
 * stop it mid-crawl, which the shared one on 5432 must never see. Its port is a free one, picked at init()
 * and kept across its stops and starts (PRIVATE_POSTGRES_PORT fixes it instead): a fixed default was taken
 * by a server an interrupted run had left behind, and the next run failed on it.
 *
 * The server refuses to run as root, and the tests run as root in CI: as root every program runs as the
 * `postgres` user (runuser), which owns the directory.
 */
export class PrivatePostgres {
  readonly dir = tempDir('postgres-private-');
  private readonly data = join(this.dir, 'data');

  constructor(
    readonly bin: string,
    public port = Number(process.env.PRIVATE_POSTGRES_PORT || 0),
  ) {}

  /** Trust auth on loopback: no password in the tests' URLs. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** initdb, then start. */
  async init(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    if (process.getuid?.() === 0) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      chownSync(this.dir, Number(stdout.trim()), Number(gid.trim()));
    }
    await this.ctl('initdb', ['-D', this.data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], 60_000);
    await this.start();
  }

  /** pg_ctl start, waiting until it accepts connections; its socket in its own directory, TCP on loopback only. */
  async start(): Promise<void> {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c fsync=off -c max_connections=200`;
    await this.ctl('pg_ctl', ['-D', this.data, '-l', join(this.dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start'], 90_000);
  }

  /**
   * pg_ctl stop: `fast` ends every session (its clients get 57P01, "terminating connection due to
   * administrator command") and shuts down cleanly; `immediate` is a crash (recovery at the next start).
   */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.ctl('pg_ctl', ['-D', this.data, '-m', mode, '-w', '-t', '60', 'stop'], 90_000);
  }

  /** Stops it if it runs (for afterAll: never leaves a server behind). */
  async close(): Promise<void> {
    await this.stop('immediate').catch(() => undefined);
  }

  private async ctl(program: string, args: string[], timeout: number): Promise<void> {
    const path = join(this.bin, program);
    const [command, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
    try {
      await run(command, argv, { timeout, cwd: this.dir });
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      // pg_ctl only says "examine the log file": the server's own last lines say why (a port in use: a server
      // left behind by an interrupted run, or PRIVATE_POSTGRES_PORT taken by something else).
      const log = join(this.dir, 'server.log');
      const tail = existsSync(log) ? `\n${readFileSync(log, 'utf8').trim().split('\n').slice(-5).join('\n')}` : '';
      throw new Error(`${program} ${args.at(-1)} failed on port ${this.port}: ${(stderr || stdout || (error as Error).message).trim()}${tail}`);
    }
  }
}

/** A port nothing listens on now, on loopback (the kernel's pick for a listener closed at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
