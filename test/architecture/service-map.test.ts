import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENV_NAMES } from '@crawler/config';
import { QueueName, SERVICE_NAMES, SERVICES } from '@crawler/contracts';

/**
 * The service map (libs/contracts/src/services.ts) against what cannot read it: the apps on disk, the code
 * that consumes each queue, nest-cli.json, the npm start scripts and the image's entrypoint. Compose and
 * Kubernetes are checked against it by test/deploy (a service and a Deployment per service of the map).
 */
const ROOT = join(__dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const isPlugin = (name: string) => name.startsWith('plugin-');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts') && !/\.(spec|test)\.ts$/.test(f))
    .map((f) => join(dir, f));
}

/** What a library's code consumes: each `pipeline.consume(queue, …, { concurrency })`, with the setting of that concurrency. */
function consumedIn(lib: string): { queue: string; concurrency?: string }[] {
  const settingOf = (path: string) => Object.entries(ENV_NAMES).find(([, p]) => p === path)?.[0] ?? `(no setting for ${path})`;
  return sources(lib).flatMap((file) =>
    [...read(file).matchAll(/\.consume\(\s*(?:QueueName\.(\w+)|(fetchQueue)\()[\s\S]*?concurrency:\s*(?:this\.config\.([\w.]+)|\d+)/g)].map((m) => ({
      queue: m[2] ? QueueName.Fetch : QueueName[m[1] as keyof typeof QueueName],
      ...(m[3] ? { concurrency: settingOf(m[3]) } : {}),
    })),
  );
}

describe('the service map', () => {
  it('names each service once, its app apps/<name>', () => {
    expect(new Set(SERVICE_NAMES).size).toBe(SERVICES.length);
    for (const service of SERVICES) expect(service.app).toBe(`apps/${service.name}`);
  });

  it('has an app for every service, and every app under apps/ is a service of the map, a plugin or the crawl CLI', () => {
    const apps = readdirSync(join(ROOT, 'apps'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `apps/${d.name}`);
    expect(apps.filter((app) => app !== 'apps/crawl' && !isPlugin(app.slice(5))).sort()).toEqual(SERVICES.map((s) => s.app).sort());
  });

  it('says what each service’s code consumes, with the setting of each concurrency', () => {
    for (const service of SERVICES) {
      expect({ service: service.name, consumes: consumedIn(`libs/${service.name}/src`) }).toEqual({ service: service.name, consumes: service.consumes });
    }
  });

  it('names only concurrency settings the configuration reads', () => {
    const settings = SERVICES.flatMap((s) => s.consumes.flatMap((c) => (c.concurrency ? [c.concurrency] : [])));
    expect(settings.length).toBeGreaterThan(5);
    expect(settings.filter((name) => !(name in ENV_NAMES))).toEqual([]);
  });

  it('is what nest-cli.json builds: an application project per service, rooted at its app', () => {
    const projects: Record<string, { type: string; root: string }> = JSON.parse(read('nest-cli.json')).projects;
    const services = Object.entries(projects).filter(([name, p]) => p.type === 'application' && name !== 'crawl' && !isPlugin(name));
    expect(Object.fromEntries(services.map(([name, p]) => [name, p.root]))).toEqual(Object.fromEntries(SERVICES.map((s) => [s.name, s.app])));
  });

  it('is what `npm run start:<service>` starts: one script per service, running its app', () => {
    const scripts: Record<string, string> = JSON.parse(read('package.json')).scripts;
    // start:all and start:services start several services: the map's own list, and the list SERVICES names.
    const several = ['start:all', 'start:services'];
    const starts = Object.entries(scripts).filter(([name]) => name.startsWith('start:') && !several.includes(name) && !isPlugin(name.slice(6)));
    expect(Object.fromEntries(starts)).toEqual(Object.fromEntries(SERVICES.map((s) => [`start:${s.name}`, `exec node dist/${s.app}/src/main.js`])));
  });

  it('is what the image’s entrypoint starts by name, and lists in its usage', () => {
    const script = read('scripts/docker-entrypoint.sh');
    const usage = /^services: (.*)$/m.exec(script)![1].trim().split(/\s+/);
    const started = /^\s*([a-z-]+(?: \| [a-z-]+)*)\)\s*\n\s*echo "\$ROOT\/dist\/apps\/\$1\/src\/main\.js"/m.exec(script)![1].split(' | ');
    expect({ usage, started }).toEqual({ usage: [...SERVICE_NAMES], started: [...SERVICE_NAMES] });
    expect(SERVICES.every((s) => s.app === `apps/${s.name}`)).toBe(true); // the entrypoint runs dist/apps/$1
  });
});
