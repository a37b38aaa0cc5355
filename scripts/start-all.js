#!/usr/bin/env node
// Starts every built service as its own OS process (the distributed shape on one machine), and the service
// `plugin-<name>` of each plugin PLUGINS enables, prefixing each line of output with the service's name. The control plane listens on PORT (default 3000); the
// others on any free port. Ctrl-C stops them all gracefully.
const { spawn } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const map = join(__dirname, '../dist/libs/contracts/src/services.js');
if (!existsSync(map)) {
  process.stderr.write('start-all: there is no dist/ (npm run build?)\n');
  process.exit(2);
}
// The services of the service map (libs/contracts/src/services.ts), as built.
const core = require(map).SERVICES.map((service) => ({ name: service.name, main: join(__dirname, `../dist/${service.app}/src/main.js`) }));
// The plugins PLUGINS enables run as services of their own, `plugin-<name>`.
const plugins = (process.env.PLUGINS || '')
  .split(',')
  .map((p) => p.trim())
  .filter(Boolean)
  .map((p) => `plugin-${p}`);
for (const plugin of plugins) {
  if (!existsSync(join(__dirname, `../dist/apps/${plugin}/src/main.js`))) {
    process.stderr.write(`start-all: PLUGINS names ${plugin.slice(7)}, but there is no dist/apps/${plugin} (npm run build?)\n`);
    process.exit(2);
  }
}
const services = [...core, ...plugins.map((name) => ({ name, main: join(__dirname, `../dist/apps/${name}/src/main.js`) }))];
const children = services.map(({ name, main }) => {
  const port = name === 'control-plane' ? process.env.PORT || '3000' : '0';
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, PORT: port },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        process.stdout.write(`${name.padEnd(15)}| ${line}\n`);
        const port = readyPort(line);
        if (port !== undefined) process.stdout.write(`${name.padEnd(15)}| ready on port ${port}: ${urls(name, port)}\n`);
      }
    });
  }
  child.on('exit', (code, signal) => process.stdout.write(`${name.padEnd(15)}| exited (${signal ?? code})\n`));
  return child;
});

/** The port of a service's "<name> ready" log line, if this is that line. */
function readyPort(line) {
  if (!/"msg":"[a-z-]+ ready"/.test(line)) return undefined;
  try {
    return JSON.parse(line).port;
  } catch {
    return undefined;
  }
}

function urls(name, port) {
  const base = `http://127.0.0.1:${port}`;
  const pages = [`health ${base}/health`, `metrics ${base}/metrics`];
  if (name === 'control-plane') pages.unshift(`dashboard ${base}/`, `status ${base}/status`);
  return pages.join(', ');
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    for (const child of children) child.kill('SIGTERM');
  });
}
Promise.all(children.map((c) => new Promise((r) => c.on('exit', r)))).then(() => process.exit(0));
