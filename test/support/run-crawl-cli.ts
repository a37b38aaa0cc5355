import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The built CLI, from the sources (jest) or from dist/ (the bench runs compiled). */
export const CRAWL_CLI = [join(__dirname, '../../dist/apps/crawl/src/main.js'), join(__dirname, '../../apps/crawl/src/main.js')].find((file) => existsSync(file))!;

export interface CrawlCliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `node dist/apps/crawl/src/main.js …args` to its end. A run still going after `timeoutMs` is sent SIGTERM (the
 * crawl writes its summary and exits), and SIGKILL `killAfterMs` later; either way the promise rejects with what
 * the crawl said on stderr and the last lines of its crawl.log in `--out`, so a hang says where it hung.
 */
export function runCrawlCli(args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs: number; killAfterMs?: number }): Promise<CrawlCliOutcome> {
  const child = spawn(process.execPath, [CRAWL_CLI, ...args], { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  let overran = '';
  const term = setTimeout(() => {
    overran = `still running after ${options.timeoutMs} ms: sent SIGTERM`;
    child.kill('SIGTERM');
  }, options.timeoutMs);
  const kill = setTimeout(
    () => {
      overran += `; no exit ${options.killAfterMs ?? 15_000} ms after SIGTERM: sent SIGKILL`;
      child.kill('SIGKILL');
    },
    options.timeoutMs + (options.killAfterMs ?? 15_000),
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(term);
      clearTimeout(kill);
      const outcome = { code, stdout, stderr };
      if (!overran) return resolve(outcome);
      const out = args[args.indexOf('--out') + 1];
      const lines = out && existsSync(join(out, 'crawl.log')) ? readFileSync(join(out, 'crawl.log'), 'utf8').trim().split('\n') : [];
      // Warnings and errors (pino levels 40 and up) say most about a hang; the last lines say where it was.
      const warnings = lines
        .filter((line) => /^\{"level":[4-6]\d/.test(line))
        .slice(-30)
        .join('\n');
      const last = lines.slice(-30).join('\n');
      reject(
        new Error(
          `crawl ${overran} (exit ${code})\n--- stdout\n${stdout.slice(-2000)}\n--- stderr\n${stderr.slice(-4000)}\n--- crawl.log: last 30 warnings\n${warnings}\n--- crawl.log: last 30 lines\n${last}`,
        ),
      );
    });
  });
}
