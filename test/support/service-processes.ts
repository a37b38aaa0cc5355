import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SERVICE_NAMES } from '@crawler/contracts';

/** The checkout's root, from source (test/support) or from the build (dist/test/support). */
function repoRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}

/** The pipeline services, as the service map lists them. */
export const SERVICES = SERVICE_NAMES;

export interface RunningService {
  name: string;
  port: number;
  process: ChildProcess;
  output: string[];
}

/** How long a service may take to say it is ready before it is killed (a loaded machine takes longer). */
const START_TIMEOUT_MS = 30_000;

/**
 * Starts one built service as its own OS process and resolves once it logs that it is ready. Several joined
 * by '+', in the service map's order (`frontier+url-seen`), run together in one process (SERVICES).
 */
export function startService(name: string, env: NodeJS.ProcessEnv, startTimeoutMs = START_TIMEOUT_MS): Promise<RunningService> {
  const together = name.includes('+');
  const main = together ? 'dist/apps/crawl/src/services-main.js' : `dist/apps/${name}/src/main.js`;
  const child = spawn(process.execPath, [...profileArgs(), join(repoRoot(), main)], {
    env: { ...process.env, PORT: '0', ...env, ...(together ? { SERVICES: name.split('+').join(',') } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    // One that does not start in time is killed, not left running behind the failed test.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start in ${startTimeoutMs / 1000} s:\n${output.join('')}`));
    }, startTimeoutMs);
    const onLine = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        output.push(`${line}\n`);
        if (output.length > 2000) output.splice(0, 1000);
        const ready = /"msg":"[a-z+-]+ ready"/.test(line) ? JSON.parse(line) : null;
        if (ready) {
          clearTimeout(timer);
          resolve({ name, port: ready.port, process: child, output });
        }
      }
    };
    child.stdout!.on('data', onLine);
    child.stderr!.on('data', onLine);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${output.join('')}`));
    });
  });
}

/**
 * `--cpu-prof` into BENCH_CPU_PROF_DIR when it is set, so a benchmark's processes can be profiled (Node
 * refuses the flag in NODE_OPTIONS). Each process writes its profile when it exits.
 */
export function profileArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/** SIGTERM, then the exit code (graceful shutdown must end in 0). */
export function stopService(service: RunningService, timeoutMs = 15_000): Promise<number | null> {
  const child = service.process;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? -1);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.removeAllListeners('exit');
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? (signal ? -1 : null));
    });
    child.kill('SIGTERM');
  });
}

/**
 * Three processes where a test needs the downloader and the control plane apart from the rest (each must read
 * its own settings, warn, keep its own secrets): every other stage together in one.
 */
export const DOWNLOADER_APART = ['frontier+dns-resolver+content-parser+content-seen+url-extractor+url-filter+url-seen', 'downloader', 'control-plane'] as const;
