import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface S3TestServer {
  /** `http://S3RVER:S3RVER@127.0.0.1:<port>`, ready for MinioContentStore. */
  url: string;
  /** The server's process, when this call started one (benchmarks sample its CPU). */
  pid?: number;
  /** Where that server keeps the objects (a scale benchmark measures the bytes stored there). */
  directory?: string;
  close(): Promise<void>;
}

/** scripts/s3-server.js, found from source (libs/…) or from the build (dist/libs/…). */
function serverScript(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return path.join(dir, 'scripts/s3-server.js');
}

/**
 * An S3-compatible server for tests: scripts/s3-server.js as its own process on 127.0.0.1, a free
 * port and a fresh temp directory, removed on close. Its own process, as in CI and production, so that a
 * server-side fault can never surface inside the test process. When S3_URL is set (CI starts one server
 * for the whole run) that URL is returned instead and close() leaves the server alone, unless `private` asks
 * for a server of the caller's own.
 */
export async function startS3TestServer(options: { private?: boolean } = {}): Promise<S3TestServer> {
  const external = process.env.S3_URL;
  if (external && !options.private) return { url: external, close: async () => undefined };

  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 's3-server-'));
  const child = spawn(process.execPath, [serverScript()], {
    env: { ...process.env, S3_PORT: '0', S3_DIR: directory },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`S3 test server did not start:\n${output}`)), 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`S3 test server exited with ${code}:\n${output}`));
    });
  }).catch(async (error) => {
    child.kill('SIGKILL');
    await fs.rm(directory, { recursive: true, force: true });
    throw error;
  });
  return {
    url,
    pid: child.pid,
    directory,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
}
