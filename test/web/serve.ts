/**
 * Serve the test web by hand: `node dist/test/web/serve.js [hosts-file]`.
 * Writes the hosts file (default ./testweb.hosts), prints the port and seed URLs, stops on SIGINT.
 * TESTWEB_HOSTS, TESTWEB_PAGES, TESTWEB_SEED, TESTWEB_PORT override the defaults.
 */
import { writeFileSync } from 'node:fs';
import { TestWeb } from './test-web';

function envInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new Error(`${name}=${raw}: not an integer`);
  return value;
}

async function main(): Promise<void> {
  const hostsPath = process.argv[2] ?? './testweb.hosts';
  const web = await TestWeb.start({
    hosts: envInt('TESTWEB_HOSTS'),
    pagesPerHost: envInt('TESTWEB_PAGES'),
    seed: envInt('TESTWEB_SEED'),
    port: envInt('TESTWEB_PORT'),
  });
  writeFileSync(hostsPath, web.hostsFile());
  console.log(`test web: ${web.hostNames.length} hosts on 127.0.0.1:${web.port}, hosts file ${hostsPath}`);
  console.log(`expected: ${web.expected.reachable.size} reachable, ${web.expected.disallowed.size} disallowed`);
  for (const seed of web.seeds()) console.log(`seed: ${seed}`);
  process.once('SIGINT', () => {
    console.log(`stopping after ${web.requestCount()} requests`);
    web.close().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
