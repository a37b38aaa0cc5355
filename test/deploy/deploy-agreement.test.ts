import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '@crawler/config';
import { findPlugin, loadPluginConfig } from '@crawler/plugin-sdk';
import { HealthController } from '../../libs/runtime/src/health.controller';
import { removeTempDirs } from '../support/temp-dirs';
import { ComposeFile, ComposeService, environmentOf, loadCompose } from './compose';
import { k8sWithComponents, ROOT, SERVICES } from './deploy-support';
import { imageInstructions, parseDockerfile, stageNamed } from './dockerfile';
import { KObject, kustomizeBuild } from './kustomize';

/**
 * The Compose files and k8s/ describe one stack: every crawler service runs the same image (the crawler's, or
 * the render stage's for plugin-render), is given the same settings by name, listens on the same HTTP port
 * and is health-checked on a /health route that answers as the Kubernetes readiness probe's does. Values may
 * differ (the addresses of Redis, MinIO and PostgreSQL, the paths of files); names may differ only as
 * DIFFERENCES lists, each with its reason. A setting or a port changed in one and not the other fails here.
 */

/** The two pairs of installs that run the same crawl: on one Redis, and on a Redis Cluster. */
const PAIRS: [string, string[], () => string][] = [
  ['docker-compose.yml and k8s/', ['docker-compose.yml'], () => join(ROOT, 'k8s')],
  [
    'docker-compose.yml + docker-compose.cluster.yml and k8s/ with the redis-cluster component',
    ['docker-compose.yml', 'docker-compose.cluster.yml'],
    () => k8sWithComponents(['redis-cluster']),
  ],
];

/**
 * The intended differences in what the two installs give a service by name. `compose` only: the name is set
 * in Compose and not in k8s/; `k8s` only: the reverse; `renamed`: the same setting under another name.
 */
interface Difference {
  names: string[];
  services: string[] | 'all';
  kind: 'compose only' | 'k8s only' | 'renamed';
  /** For `renamed`: the name in Compose for each name of `names` (the Kubernetes one). */
  composeNames?: string[];
  why: string;
}

const DIFFERENCES: Difference[] = [
  {
    names: ['PLUGINS', 'PLUGIN_FOCUS_TERMS'],
    services: 'all',
    kind: 'compose only',
    why: 'Compose forwards them from the shell (`PLUGINS=png docker compose up`), empty by default; k8s/ has them as commented literals of the crawler-config ConfigMap, to uncomment.',
  },
  {
    names: ['PLUGIN_MONITOR_TERMS', 'PLUGIN_MONITOR_WEBHOOK_URL'],
    services: ['plugin-monitor'],
    kind: 'compose only',
    why: 'Forwarded from the shell in Compose; commented literals of the ConfigMap in k8s/, as above.',
  },
  {
    names: ['PLUGIN_RENDER_CONTEXTS', 'PLUGIN_RENDER_MAX_HEAP_MB'],
    services: ['plugin-render'],
    kind: 'k8s only',
    why: 'k8s/ pins the pool its memory request and limit are sized for, beside them; Compose sets no memory limit, and its defaults are those values (checked below).',
  },
  {
    names: ['CONTROL_PLANE_TOKEN'],
    composeNames: ['CONTROL_PLANE_TOKEN_FILE'],
    services: ['control-plane'],
    kind: 'renamed',
    why: 'The same token: a variable from a Secret in k8s/, a file Compose mounts from its secret (an environment variable would show in `docker inspect`).',
  },
];

const appliesTo = (d: Difference, service: string) => d.services === 'all' || d.services.includes(service);

/** Stage of the Dockerfile → the name a Kubernetes container gives its image (k8s/kustomization.yaml's `images:`). */
const IMAGE_OF_STAGE: Record<string, string> = { default: 'crawler', render: 'crawler-render' };

const stages = parseDockerfile(join(ROOT, 'Dockerfile')).stages;

/** The Dockerfile stage a Compose service's image is built from: its build target, or the last stage. */
function composeStage(service: ComposeService): string {
  const build = typeof service.build === 'string' ? {} : (service.build ?? {});
  const name = build.target ?? stages[stages.length - 1].name;
  if (!name || !stageNamed(stages, name)) throw new Error(`no Dockerfile stage ${name}`);
  return name;
}

/** The `images:` entry of k8s/kustomization.yaml that a built container's image came from. */
function kubernetesImage(image: string): string {
  const entries: { name: string; newName?: string; newTag?: string }[] = parse(readFileSync(join(ROOT, 'k8s/kustomization.yaml'), 'utf8')).images;
  const entry = entries.find((e) => `${e.newName ?? e.name}:${e.newTag}` === image);
  if (!entry) throw new Error(`${image}: no images entry of k8s/kustomization.yaml makes it`);
  return entry.name;
}

/** A Kubernetes container's environment, by name (envFrom ConfigMaps and Secrets, then env), values where literal or in a ConfigMap. */
function kubernetesEnv(objects: KObject[], container: any): Record<string, string> {
  const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && (o.metadata.name === name || o.metadata.name.startsWith(`${name}-`))) as any;
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, find('ConfigMap', from.configMapRef.name).data);
    if (from.secretRef) for (const key of Object.keys(find('Secret', from.secretRef.name).data)) env[key] = '(secret)';
  }
  for (const variable of container.env ?? []) env[variable.name] = variable.value ?? '(reference)';
  return env;
}

/** The port a service listens on, as its configuration reads it (files a setting names are not read for this). */
const listenPort = (env: Record<string, string>) => loadConfig(env.PORT === undefined ? {} : { PORT: env.PORT }).port;

/** The path the image's HEALTHCHECK script GETs (scripts/docker-healthcheck.sh). */
function healthcheckPath(): string {
  const script = readFileSync(join(ROOT, 'scripts/docker-healthcheck.sh'), 'utf8');
  const paths = [...script.matchAll(/GET (\/\S*) HTTP\/1\.1/g)].map((m) => m[1]);
  expect(paths).toHaveLength(1);
  expect(script).toMatch(/^port=\$\{PORT:-3000\}$/m);
  expect(script).toContain('/dev/tcp/127.0.0.1/$port');
  return paths[0];
}

/** HealthController's routes, by full path, to the name of the method that answers them (Nest's route metadata). */
function healthRoutes(): Map<string, string> {
  const base = String(Reflect.getMetadata('path', HealthController)).replace(/^\/?/, '/');
  const routes = new Map<string, string>();
  for (const method of Object.getOwnPropertyNames(HealthController.prototype)) {
    const handler = (HealthController.prototype as any)[method];
    const path = typeof handler === 'function' ? Reflect.getMetadata('path', handler) : undefined;
    if (path === undefined) continue;
    routes.set(String(path) === '/' ? base : `${base}/${String(path).replace(/^\//, '')}`, method);
  }
  return routes;
}

/** What a HealthController route answers, with these dependency checks: the body, or the HTTP status it refuses with. */
async function answer(method: string, checks: Record<string, string>): Promise<unknown> {
  const controller = new HealthController('any', { check: async () => checks } as any, false) as any;
  try {
    return await controller[method]();
  } catch (error) {
    return { refused: (error as { getStatus(): number }).getStatus() };
  }
}

afterAll(removeTempDirs);

describe.each(PAIRS)('%s agree', (_, composeFiles, k8sDir) => {
  const compose: ComposeFile = loadCompose(composeFiles.map((f) => join(ROOT, f)));
  const objects = kustomizeBuild(k8sDir());
  const deployment = (name: string) => objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name) as any;

  it('both run every crawler service, and no other', () => {
    const composeCrawlers = Object.entries(compose.services)
      // The CLI is run on demand (profile tools); plugin-render, under its own profile, is a crawler service still.
      .filter(([, s]) => s.build !== undefined && !s.profiles?.includes('tools'))
      .map(([name]) => name);
    expect(composeCrawlers.sort()).toEqual([...SERVICES].sort());
    expect(
      objects
        .filter((o) => o.kind === 'Deployment')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual([...SERVICES].sort());
  });

  it('run each service on the same image: the crawler’s, or the render stage’s (with Chromium) for plugin-render', () => {
    for (const name of SERVICES) {
      const stage = composeStage(compose.services[name]);
      const [container] = deployment(name).spec.template.spec.containers;
      expect({ name, stage, k8s: kubernetesImage(container.image) }).toEqual({ name, stage, k8s: IMAGE_OF_STAGE[stage] ?? `(no image for stage ${stage})` });
    }
  });

  it('give each service the same settings by name, but for the listed differences', () => {
    for (const name of SERVICES) {
      const composeNames = new Set(Object.keys(environmentOf(compose.services[name])));
      const k8sNames = new Set(Object.keys(kubernetesEnv(objects, deployment(name).spec.template.spec.containers[0])));
      for (const difference of DIFFERENCES.filter((d) => appliesTo(d, name))) {
        difference.names.forEach((variable, i) => {
          if (difference.kind === 'compose only') composeNames.delete(variable);
          if (difference.kind === 'k8s only') k8sNames.delete(variable);
          if (difference.kind === 'renamed' && composeNames.delete(difference.composeNames![i])) composeNames.add(variable);
        });
      }
      expect({ name, compose: [...composeNames].sort() }).toEqual({ name, compose: [...k8sNames].sort() });
    }
  });

  it('differ only where a listed difference is still true (a resolved one leaves the list)', () => {
    for (const difference of DIFFERENCES) {
      const services = difference.services === 'all' ? SERVICES : difference.services;
      for (const name of services) {
        const composeEnv = environmentOf(compose.services[name]);
        const k8sEnv = kubernetesEnv(objects, deployment(name).spec.template.spec.containers[0]);
        difference.names.forEach((variable, i) => {
          const inCompose = (difference.kind === 'renamed' ? difference.composeNames![i] : variable) in composeEnv;
          const inK8s = variable in k8sEnv;
          const expected = { 'compose only': [true, false], 'k8s only': [false, true], renamed: [true, true] }[difference.kind];
          expect({ name, variable, present: [inCompose, inK8s] }).toEqual({ name, variable, present: expected });
          if (difference.kind === 'renamed') expect({ name, variable, both: difference.composeNames![i] in k8sEnv }).toEqual({ name, variable, both: false });
        });
      }
    }
  });

  it('leave each setting that Compose forwards from the shell as a commented literal of the Kubernetes ConfigMap', () => {
    const kustomization = readFileSync(join(ROOT, 'k8s/kustomization.yaml'), 'utf8');
    for (const variable of DIFFERENCES.filter((d) => d.kind === 'compose only').flatMap((d) => d.names)) {
      expect({ variable, commented: new RegExp(`^\\s*#\\s*- ${variable}=`, 'm').test(kustomization) }).toEqual({ variable, commented: true });
    }
  });

  it('run plugin-render’s pool at the same size: what k8s/ pins is the default Compose runs with', () => {
    const k8sEnv = kubernetesEnv(objects, deployment('plugin-render').spec.template.spec.containers[0]);
    const pinned = DIFFERENCES.find((d) => d.kind === 'k8s only' && d.services !== 'all' && d.services.includes('plugin-render'))!.names;
    const chromium = { PLUGIN_RENDER_CHROMIUM_PATH: process.execPath }; // any executable passes the check; the pool's size is what is read
    const pick = (env: Record<string, string>) => Object.fromEntries(pinned.map((n) => [n, env[n]]));
    const composeEnv = environmentOf(compose.services['plugin-render']);
    expect(loadPluginConfig(findPlugin('render'), { ...pick(k8sEnv), ...chromium })).toEqual(
      loadPluginConfig(findPlugin('render'), { ...pick(composeEnv), ...chromium }),
    );
  });

  it('have each service listen on the same HTTP port: the container port its probes use in k8s/, PORT where Compose’s health check asks', () => {
    for (const name of SERVICES) {
      const [container] = deployment(name).spec.template.spec.containers;
      const k8sPort = listenPort(kubernetesEnv(objects, container));
      const http = container.ports.find((p: any) => p.name === 'http')?.containerPort;
      const composePort = listenPort(environmentOf(compose.services[name]));
      expect({ name, compose: composePort, k8s: k8sPort, containerPort: http }).toEqual({ name, compose: k8sPort, k8s: composePort, containerPort: k8sPort });
    }
  });

  it('health-check each service on a /health route that answers as the Kubernetes readiness probe’s does', async () => {
    const routes = healthRoutes();
    const composePath = healthcheckPath();
    expect(routes.get(composePath)).toBeDefined();
    for (const name of SERVICES) {
      const service = compose.services[name];
      // The image's HEALTHCHECK, not one of the service's own: the script above.
      expect({ name, own: service.healthcheck }).toEqual({ name, own: undefined });
      const healthcheck = imageInstructions(stageNamed(stages, composeStage(service))!).filter((i) => i.keyword === 'HEALTHCHECK');
      expect(healthcheck.at(-1)?.exec?.join(' ')).toMatch(/scripts\/docker-healthcheck\.sh$/);
      const [container] = deployment(name).spec.template.spec.containers;
      const readiness = container.readinessProbe.httpGet.path;
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        expect({ name, probe, route: routes.has(container[probe].httpGet.path) }).toEqual({ name, probe, route: true });
      }
      for (const checks of [{ redis: 'ok' }, { redis: 'timeout after 2000 ms' }]) {
        expect({ name, checks, compose: await answer(routes.get(composePath)!, checks) }).toEqual({
          name,
          checks,
          compose: await answer(routes.get(readiness)!, checks),
        });
      }
    }
  });
});
