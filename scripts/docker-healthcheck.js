#!/usr/bin/env node
// The image's HEALTHCHECK: GET http://127.0.0.1:$PORT/health (PORT as the service reads it, default 3000)
// and exit 0 on a 2xx answer, 1 otherwise. A container running a one-shot tool (crawl, or the cluster CLI)
// serves no HTTP, so there the check passes while the tool runs. `--proc DIR` reads processes from DIR
// instead of /proc (for tests).
'use strict';

const { readdirSync, readFileSync } = require('node:fs');

/** Whether a process of this container runs one of the tools of apps/crawl (PID 1, or under an init). */
function runsTool(proc) {
  let pids = [];
  try {
    pids = readdirSync(proc).filter((name) => /^\d+$/.test(name));
  } catch {
    return false;
  }
  return pids.some((pid) => {
    try {
      return readFileSync(`${proc}/${pid}/cmdline`, 'utf8')
        .split('\0')
        .some((arg) => /\/apps\/crawl\/src\/[^/]+\.js$/.test(arg));
    } catch {
      return false; // ended meanwhile, or not ours to read
    }
  });
}

const procFlag = process.argv.indexOf('--proc');
if (runsTool(procFlag > 0 ? process.argv[procFlag + 1] : '/proc')) process.exit(0);

const port = process.env.PORT || '3000';
fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(4000) }).then(
  (response) => {
    if (!response.ok) process.stderr.write(`health: HTTP ${response.status}\n`);
    process.exit(response.ok ? 0 : 1);
  },
  (error) => {
    process.stderr.write(`health: ${error.cause?.code ?? error.message}\n`);
    process.exit(1);
  },
);
