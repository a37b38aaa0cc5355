/**
 * Jest's global teardown: what the run left open, named. It runs in the process the test files ran in (one
 * file at a time, in band), once they have all finished: a server, socket, child process, worker thread or
 * timer still alive after a few seconds is something a test started and did not stop, and jest would wait on
 * it for ever. Each is named so that the test that started it can be found (a port, a child's command line).
 * It only reports: `npm test` fails a lane whose jest does not exit (test/run-all.js).
 */
const SETTLE_MS = 5_000;

/** Resources every process has while it writes to its pipes and terminal: not something a test left. */
const OWN_RESOURCES = new Set(['TTYWrap', 'PipeWrap', 'FSReqCallback', 'FSReqPromise']);

function describeHandle(handle: any): string {
  const kind = handle?.constructor?.name ?? typeof handle;
  if (handle === process.stdout || handle === process.stderr || handle === process.stdin) return '';
  if (kind === 'Socket' || kind === 'TLSSocket') return `${kind} ${handle.localAddress}:${handle.localPort} → ${handle.remoteAddress}:${handle.remotePort}`;
  if (kind === 'Server') return `Server listening on ${JSON.stringify(handle.address())}`;
  if (kind === 'ChildProcess') return `ChildProcess ${handle.pid}: ${handle.spawnargs?.join(' ').slice(0, 300)}`;
  return kind;
}

/** What keeps the event loop alive: the handles by name, then every other kind of resource by count. */
function leftovers(): string[] {
  const handles = (process as any)._getActiveHandles() as any[];
  const named = handles.map(describeHandle).filter(Boolean);
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) if (!OWN_RESOURCES.has(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  // Sockets, servers and children are named above; the rest (timers, workers, message ports, lookups) by count.
  for (const kind of ['TCPSocketWrap', 'TCPServerWrap', 'ProcessWrap']) counts.delete(kind);
  return [...named, ...[...counts].map(([kind, n]) => `${n} × ${kind}`)];
}

export default async function reportOpenHandles(): Promise<void> {
  const deadline = Date.now() + SETTLE_MS;
  // Not unref'd: with nothing else keeping the loop alive, an unref'd wait would let node end here, before jest
  // sets the run's exit code (a failed run exited 0).
  while (leftovers().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
  const left = leftovers();
  if (left.length > 0)
    process.stderr.write(`\nStill open ${SETTLE_MS / 1000} s after the last test (a test started it and did not stop it):\n${left.map((l) => `  - ${l}`).join('\n')}\n`);
}
