/**
 * Jest's global teardown: what the run left open, named. It runs in the process the test files ran in (one
 * file at a time, in band), once they have all finished: a server, socket, child process or timer still
 * alive after a few seconds is something a test started and did not stop, and jest waits on it. Each is
 * named so that the test that started it can be found (a port, a child's command line). It only reports:
 * `forceExit` ends the run whatever is left (jest.config.js says why).
 */
const SETTLE_MS = 5_000;

function describeHandle(handle: any): string {
  const kind = handle?.constructor?.name ?? typeof handle;
  if (handle === process.stdout || handle === process.stderr || handle === process.stdin) return '';
  if (kind === 'Socket' || kind === 'TLSSocket') return `${kind} ${handle.localAddress}:${handle.localPort} → ${handle.remoteAddress}:${handle.remotePort}`;
  if (kind === 'Server') return `Server listening on ${JSON.stringify(handle.address())}`;
  if (kind === 'ChildProcess') return `ChildProcess ${handle.pid}: ${handle.spawnargs?.join(' ').slice(0, 300)}`;
  return kind;
}

function leftovers(): string[] {
  const handles = (process as any)._getActiveHandles() as unknown[];
  const named = handles.map(describeHandle).filter(Boolean);
  const timers = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  return timers > 0 ? [...named, `${timers} timer(s)`] : named;
}

export default async function reportOpenHandles(): Promise<void> {
  const deadline = Date.now() + SETTLE_MS;
  while (leftovers().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250).unref());
  const left = leftovers();
  if (left.length > 0)
    process.stderr.write(`\nStill open ${SETTLE_MS / 1000} s after the last test (a test started it and did not stop it):\n${left.map((l) => `  - ${l}`).join('\n')}\n`);
}
