import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../support/private-servers';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

/**
 * The image's HEALTHCHECK script, run by bash as Docker runs it, against a real HTTP server on this machine:
 * what the answer decides. Against the service itself, and with nothing listening: image.test.ts.
 */
const SCRIPT = join(__dirname, '..', '..', 'scripts', 'docker-healthcheck.sh');

let proc: string;
beforeEach(() => {
  // A process table of our own: the machine's may hold a crawl another test started.
  proc = tempDir('healthcheck-proc-');
});
afterAll(removeTempDirs);

function processRuns(pid: number, args: string[]): void {
  mkdirSync(join(proc, String(pid)));
  writeFileSync(join(proc, String(pid), 'cmdline'), `${args.join('\0')}\0`);
}

function check(port: number): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', [SCRIPT, '--proc', proc], { env: { PATH: process.env.PATH, PORT: String(port) } }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stderr }),
    );
  });
}

async function serving(status: number): Promise<{ server: Server; port: number; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    res.writeHead(status, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, paths };
}

describe('the image health check (scripts/docker-healthcheck.sh)', () => {
  it('passes when GET /health on PORT answers 2xx', async () => {
    const { server, port, paths } = await serving(200);
    try {
      expect(await check(port)).toEqual({ code: 0, stderr: '' });
      expect(paths).toEqual(['/health']);
    } finally {
      server.close();
    }
  });

  it('fails, saying the status, when /health answers otherwise', async () => {
    const { server, port } = await serving(503);
    try {
      expect(await check(port)).toEqual({ code: 1, stderr: 'health: HTTP 503\n' });
    } finally {
      server.close();
    }
  });

  it('does not take a service for a tool because a path merely contains the tool’s folder', async () => {
    const port = await freePort();
    processRuns(1, ['node', '/app/dist/apps/crawl/src/lib/helper.js.map', '/app/dist/apps/crawl/src/']);
    expect((await check(port)).code).toBe(1);
  });
});
