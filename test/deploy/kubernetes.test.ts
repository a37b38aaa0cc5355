import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '@crawler/config';
import { SERVICES as SERVICES_MAP } from '@crawler/contracts';
import { findPlugin, loadPluginConfig } from '@crawler/plugin-sdk';
import { parseRedisUrl } from '@crawler/redis';
import { listenPlan } from '@crawler/runtime';
import { MetricsController } from '../../libs/runtime/src/metrics.controller';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { configProblem, k8sWithComponents, mainOf, ROOT, runEntrypoint, SERVICES, servicesKeepingRecords, unknownEnvNames } from './deploy-support';
import { imageEnv, parseDockerfile, stageNamed } from './dockerfile';
import { KObject, kustomizeBuild, podSpecOf, splitImage } from './kustomize';
import { KUBERNETES_VERSION, modelModule, packageVersion, schemaProblems, strictTypeProblems } from './kubernetes-schemas';

/**
 * k8s/ as `kubectl apply -k k8s/` would install it, checked offline: every object valid for Kubernetes
 * v1.33 (kubernetes-models' OpenAPI validators, and its types for unknown fields), and consistent with the
 * crawler itself: a Deployment per service running that service, probes on the /health it serves, only
 * settings the configuration reads, and values it accepts; plugin-render on the image with Chromium, with the
 * memory its browser pool needs. The same checks hold with the redis-cluster
 * component, whose own checks follow.
 */

/** What a test asks of one build of k8s/: its objects by kind and name, and a container's environment. */
function inspect(objects: KObject[]) {
  const all = (kind: string) => objects.filter((o) => o.kind === kind) as any[];
  const one = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name) as any;
  /** A generated ConfigMap or Secret by the name its generator gave it (before the hash suffix). */
  const generated = (kind: string, name: string) =>
    objects.find((o) => o.kind === kind && (o.metadata.name === name || new RegExp(`^${name}-[a-z0-9]{10}$`).test(o.metadata.name))) as any;

  /** A container's environment as the kubelet assembles it (envFrom, then env; references resolved). */
  function environment(object: KObject, container: any): Record<string, string> {
    const env: Record<string, string> = {};
    const decode = (secret: any, key: string) => Buffer.from(secret.data[key], 'base64').toString('utf8');
    for (const from of container.envFrom ?? []) {
      if (from.configMapRef)
        Object.assign(env, one('ConfigMap', from.configMapRef.name)?.data ?? fail(`${object.metadata.name}: no ConfigMap ${from.configMapRef.name}`));
      if (from.secretRef) {
        const secret = one('Secret', from.secretRef.name) ?? fail(`${object.metadata.name}: no Secret ${from.secretRef.name}`);
        for (const key of Object.keys(secret.data)) env[key] = decode(secret, key);
      }
    }
    // A pod's own fields: the first pod of its workload (a StatefulSet's <name>-0).
    const fields: Record<string, string | undefined> = { 'metadata.name': `${object.metadata.name}-0`, 'metadata.namespace': object.metadata.namespace };
    for (const variable of container.env ?? []) {
      const ref = variable.valueFrom;
      if (ref?.configMapKeyRef) env[variable.name] = one('ConfigMap', ref.configMapKeyRef.name).data[ref.configMapKeyRef.key];
      else if (ref?.secretKeyRef) env[variable.name] = decode(one('Secret', ref.secretKeyRef.name), ref.secretKeyRef.key);
      else if (ref?.fieldRef && fields[ref.fieldRef.fieldPath] !== undefined) env[variable.name] = fields[ref.fieldRef.fieldPath]!;
      else if (ref) fail(`${object.metadata.name}: valueFrom ${JSON.stringify(ref)} is not resolved by this test`);
      else env[variable.name] = variable.value ?? '';
    }
    return env;
  }

  /** A container's arguments with the `$(VAR)` references Kubernetes expands from its environment. */
  const expandedArgs = (object: KObject, container: any): string[] => {
    const env = environment(object, container);
    return (container.args ?? []).map((arg: string) => arg.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (ref, name) => env[name] ?? ref));
  };

  return { objects, all, one, generated, environment, expandedArgs };
}

function fail(message: string): never {
  throw new Error(message);
}

/** The container port a probe or Service port names (by name or number). */
function containerPort(container: any, port: string | number): number | undefined {
  const found = (container.ports ?? []).find((p: any) => p.name === port || p.containerPort === port);
  return found?.containerPort;
}

const labelsMatch = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** The path the runtime serves Prometheus' scrape on (MetricsController's route, from Nest's metadata). */
function metricsPath(): string {
  const base = String(Reflect.getMetadata('path', MetricsController) ?? '').replace(/^\/|\/$/g, '');
  const route = String(Reflect.getMetadata('path', MetricsController.prototype.metrics)).replace(/^\//, '');
  return `/${[base, route].filter(Boolean).join('/')}`;
}

/** Kubernetes quantities in base units, to compare requests with limits. */
function quantity(value: string | number): number {
  const m = /^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(value));
  if (!m) throw new Error(`not a quantity: ${value}`);
  const unit = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] ?? ''] ?? 1;
  return parseFloat(m[1]) * unit;
}

/**
 * plugin-render's memory in MiB: its Node process (as much as the other services are given), the idle browser
 * and a renderer per context while it renders (docs/trade-offs.md's measurements, rounded up). A renderer may
 * grow by PLUGIN_RENDER_MAX_HEAP_MB more before it crashes alone.
 */
const RENDER_MEMORY_MIB = { node: 192, browser: 320, renderer: 128 };

/** The environment the Dockerfile's render stage sets (PLUGIN_RENDER_CHROMIUM_PATH, where it installs Chromium). */
const renderImageEnv = imageEnv(stageNamed(parseDockerfile(join(ROOT, 'Dockerfile')).stages, 'render')!);

/**
 * The Deployments that run one replica and no autoscaler, for the reason their files give: the frontier (its
 * pace is politeness, not CPU; replicas may overshoot the crawl-wide limits) and the control plane (an
 * operator's load). Every other Deployment scales.
 */
const SINGLETONS = ['control-plane', 'frontier'];

/** Whether a workload's file says, in a comment just above `replicas: 1`, why it runs one. */
function saysWhySingle(name: string): boolean {
  const text = readFileSync(join(ROOT, 'k8s/services', `${name}.yaml`), 'utf8');
  return /(^ *#.*\n)+ *replicas: 1$/m.test(text);
}

/** The autoscalers of a build, HPAs and KEDA ScaledObjects alike, by the Deployment they scale. */
function autoscalersOf(objects: KObject[], deployment: string): KObject[] {
  return objects.filter(
    (o: any) =>
      (o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.kind === 'Deployment' && o.spec.scaleTargetRef.name === deployment) ||
      (o.kind === 'ScaledObject' && (o.spec.scaleTargetRef.kind ?? 'Deployment') === 'Deployment' && o.spec.scaleTargetRef.name === deployment),
  );
}

/** The installs k8s/ offers, each checked by the same tests: as it is (one Redis), and on a Redis Cluster. */
const INSTALLS: [string, () => KObject[]][] = [
  ['k8s/', () => kustomizeBuild(join(ROOT, 'k8s'))],
  ['k8s/ with the redis-cluster component', () => kustomizeBuild(k8sWithComponents(['redis-cluster']))],
];

afterAll(removeTempDirs);

describe.each(INSTALLS)(`%s (kustomize build, validated against Kubernetes ${KUBERNETES_VERSION})`, (_, build) => {
  const { objects, all, one, generated, environment, expandedArgs } = inspect(build());
  const workloads = () => [...all('Deployment'), ...all('StatefulSet'), ...all('Job')];

  /** A Redis container's settings: its config file (mounted from a ConfigMap), then its `--name value` arguments. */
  function redisSettings(workload: KObject, container: any): Record<string, string> {
    const [program, ...args] = expandedArgs(workload, container);
    expect(program).toBe('redis-server');
    const settings: Record<string, string> = {};
    if (args[0] && !args[0].startsWith('--')) {
      const file = args.shift()!;
      const mount = container.volumeMounts.find((m: any) => file.startsWith(`${m.mountPath}/`));
      const volume = podSpecOf(workload)!.volumes.find((v: any) => v.name === mount.name);
      const text: string = one('ConfigMap', volume.configMap.name).data[file.slice(mount.mountPath.length + 1)];
      for (const line of text.split('\n')) {
        const m = /^\s*([a-z-]+)\s+(.*?)\s*$/.exec(line);
        if (m && !line.trimStart().startsWith('#')) settings[m[1]] = m[2];
      }
    }
    for (let i = 0; i < args.length; i += 2) settings[args[i].replace(/^--/, '')] = args[i + 1];
    return settings;
  }
  const redisWorkloads = () => all('StatefulSet').filter((set) => set.spec.template.spec.containers[0].image.startsWith('redis:'));

  it(`is valid against the Kubernetes ${KUBERNETES_VERSION} OpenAPI schemas (kubernetes-models ${packageVersion('kubernetes-models')})`, () => {
    expect(objects.length).toBeGreaterThan(15);
    expect(schemaProblems(objects)).toEqual([]);
  });

  it('has no field the Kubernetes API does not define (strict: the models’ types reject unknown fields)', () => {
    expect(strictTypeProblems(objects)).toEqual([]);
  });

  it('is the whole install: built-in kinds only, all in one namespace that it creates', () => {
    expect(objects.filter((o) => !modelModule(o.apiVersion, o.kind).startsWith('kubernetes-models/')).map((o) => o.kind)).toEqual([]);
    const [namespace] = all('Namespace');
    expect(all('Namespace')).toHaveLength(1);
    expect(objects.filter((o) => o.kind !== 'Namespace' && o.metadata.namespace !== namespace.metadata.name).map((o) => o.metadata.name)).toEqual([]);
  });

  it('has a Deployment per service of the service map and per plugin, that runs that very service', () => {
    const dir = tempDir('entrypoint-');
    expect(
      all('Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual([...SERVICES].sort());
    for (const name of SERVICES) {
      const [container] = one('Deployment', name).spec.template.spec.containers;
      expect(container.command).toBeUndefined(); // the image's entrypoint starts the program the args name
      const run = runEntrypoint(dir, container.args);
      expect({ name, status: run.status, node: run.node }).toEqual({ name, status: 0, node: [mainOf(name)] });
    }
  });

  it('runs the crawler image the kustomization names, pinned by tag', () => {
    const kustomization = readFileSync(join(ROOT, 'k8s/kustomization.yaml'), 'utf8');
    expect(kustomization).toMatch(/images:\s*\n\s*- name: crawler/);
    for (const deployment of all('Deployment')) {
      for (const container of deployment.spec.template.spec.containers) {
        const image = splitImage(container.image);
        expect({ deployment: deployment.metadata.name, tagged: Boolean(image.tag || image.digest) }).toEqual({ deployment: deployment.metadata.name, tagged: true });
      }
    }
    for (const set of all('StatefulSet')) {
      for (const container of set.spec.template.spec.containers) expect(container.image).toMatch(/:[\w][\w.-]*$/); // no :latest-by-default
    }
  });

  it('runs plugin-render on crawler-render (the Dockerfile’s render stage, with Chromium), every other service on crawler, as the kustomization names them', () => {
    const entries: { name: string; newName?: string; newTag?: string }[] = parse(readFileSync(join(ROOT, 'k8s/kustomization.yaml'), 'utf8')).images;
    const imageNamed = (name: string) => {
      const entry = entries.find((e) => e.name === name) ?? fail(`k8s/kustomization.yaml: no images entry for ${name}`);
      return `${entry.newName ?? entry.name}:${entry.newTag}`;
    };
    expect(imageNamed('crawler-render')).not.toBe(imageNamed('crawler'));
    for (const name of SERVICES) {
      const [container] = one('Deployment', name).spec.template.spec.containers;
      expect({ name, image: container.image }).toEqual({ name, image: imageNamed(name === 'plugin-render' ? 'crawler-render' : 'crawler') });
    }
  });

  it('leaves plugin-render the Chromium of its image (PLUGIN_RENDER_CHROMIUM_PATH), and points no other service at one', () => {
    expect(renderImageEnv.PLUGIN_RENDER_CHROMIUM_PATH).toMatch(/^\//);
    for (const name of SERVICES) {
      const deployment = one('Deployment', name);
      const env = environment(deployment, deployment.spec.template.spec.containers[0]);
      const chromium = name === 'plugin-render' ? { ...renderImageEnv, ...env }.PLUGIN_RENDER_CHROMIUM_PATH : env.PLUGIN_RENDER_CHROMIUM_PATH;
      expect({ name, chromium }).toEqual({ name, chromium: name === 'plugin-render' ? renderImageEnv.PLUGIN_RENDER_CHROMIUM_PATH : undefined });
    }
  });

  it('sizes plugin-render’s memory for its pool: the busy renderers within the request, each at its heap limit within the limit', () => {
    const deployment = one('Deployment', 'plugin-render');
    const [container] = deployment.spec.template.spec.containers;
    // Any executable passes the Chromium check here: the pool's settings are what is read.
    const env = { ...environment(deployment, container), PLUGIN_RENDER_CHROMIUM_PATH: process.execPath };
    const { contexts, maxHeapMb } = loadPluginConfig(findPlugin('render'), env) as { contexts: number; maxHeapMb: number };
    const { node, browser, renderer } = RENDER_MEMORY_MIB;
    const mib = (value: string) => quantity(value) / 2 ** 20;
    expect(mib(container.resources.requests.memory)).toBeGreaterThanOrEqual(node + browser + contexts * renderer);
    expect(mib(container.resources.limits.memory)).toBeGreaterThanOrEqual(node + browser + contexts * (renderer + maxHeapMb));
  });

  it('gives every crawler container only settings the configuration reads, with values it accepts', () => {
    for (const deployment of all('Deployment')) {
      for (const container of deployment.spec.template.spec.containers) {
        const env = environment(deployment, container);
        expect({ deployment: deployment.metadata.name, unknown: unknownEnvNames(env), invalid: configProblem(env) }).toEqual({
          deployment: deployment.metadata.name,
          unknown: [],
          invalid: undefined,
        });
        expect(env.REDIS_URL).toBeDefined();
        expect(env.S3_URL).toBeDefined();
      }
    }
  });

  it('probes liveness on /health/live and readiness on /health/ready, on the port each service listens on', () => {
    // The paths are the runtime's health routes: image.test.ts GETs every one of them from a running service.
    const expected: Record<string, string> = { startupProbe: '/health/live', livenessProbe: '/health/live', readinessProbe: '/health/ready' };
    for (const deployment of all('Deployment')) {
      for (const container of deployment.spec.template.spec.containers) {
        const port = loadConfig(environment(deployment, container)).port;
        for (const [probe, path] of Object.entries(expected)) {
          const httpGet = container[probe]?.httpGet;
          expect({ deployment: deployment.metadata.name, probe, path: httpGet?.path, port: httpGet && containerPort(container, httpGet.port) }).toEqual({
            deployment: deployment.metadata.name,
            probe,
            path,
            port,
          });
        }
        // Readiness checks the stores a service uses within HEALTH_CHECK_TIMEOUT_MS (2 s) each: the probe must wait longer.
        expect(container.readinessProbe.timeoutSeconds).toBeGreaterThan(2);
      }
    }
  });

  it('marks every crawler pod for Prometheus: scraped on the port its service listens on, at the runtime’s /metrics', () => {
    expect(metricsPath()).toBe('/metrics');
    for (const deployment of all('Deployment')) {
      const [container] = deployment.spec.template.spec.containers;
      const port = loadConfig(environment(deployment, container)).port;
      expect({ deployment: deployment.metadata.name, annotations: deployment.spec.template.metadata.annotations }).toEqual({
        deployment: deployment.metadata.name,
        annotations: expect.objectContaining({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(port), 'prometheus.io/path': metricsPath() }),
      });
      expect(containerPort(container, Number(deployment.spec.template.metadata.annotations['prometheus.io/port']))).toBe(port);
    }
  });

  it('sets resource requests and limits on every container, requests within limits', () => {
    for (const workload of workloads()) {
      for (const container of podSpecOf(workload)!.containers) {
        for (const resource of ['cpu', 'memory']) {
          const { requests, limits } = container.resources ?? {};
          expect({ workload: workload.metadata.name, resource, request: requests?.[resource] !== undefined, limit: limits?.[resource] !== undefined }).toEqual({
            workload: workload.metadata.name,
            resource,
            request: true,
            limit: true,
          });
          expect(quantity(requests[resource])).toBeLessThanOrEqual(quantity(limits[resource]));
        }
      }
    }
  });

  it('runs crawler pods as a non-root user, without privilege escalation', () => {
    for (const deployment of all('Deployment')) {
      const pod = deployment.spec.template.spec;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      for (const container of pod.containers) expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
    }
  });

  it('selects its own pods: every workload selector and Service selector matches a pod template', () => {
    const templates = [...all('Deployment'), ...all('StatefulSet')].map((w) => w.spec.template.metadata.labels);
    for (const workload of [...all('Deployment'), ...all('StatefulSet')]) {
      expect(labelsMatch(workload.spec.selector.matchLabels, workload.spec.template.metadata.labels)).toBe(true);
    }
    for (const service of all('Service')) {
      expect({ service: service.metadata.name, matches: templates.filter((labels) => labelsMatch(service.spec.selector, labels)).length }).toEqual({
        service: service.metadata.name,
        matches: 1,
      });
    }
  });

  it('mounts every file a setting names (the URL filter’s blocklist from its ConfigMap)', () => {
    for (const deployment of all('Deployment')) {
      const pod = deployment.spec.template.spec;
      for (const container of pod.containers) {
        const env = environment(deployment, container);
        for (const name of ['URL_FILTER_BLOCKLIST_FILE', 'DNS_HOSTS_FILE']) {
          if (!env[name]) continue;
          const mount = container.volumeMounts.find((m: any) => env[name].startsWith(`${m.mountPath}/`));
          expect(mount).toBeDefined();
          const volume = pod.volumes.find((v: any) => v.name === mount.name);
          const key = env[name].slice(mount.mountPath.length + 1);
          expect(one('ConfigMap', volume.configMap.name).data[key]).toBeDefined();
        }
      }
    }
  });

  it('runs Redis and MinIO as StatefulSets with persistent volumes behind headless Services', () => {
    expect(redisWorkloads().length).toBe(1);
    for (const set of [...redisWorkloads(), one('StatefulSet', 'minio')]) {
      const service = one('Service', set.spec.serviceName);
      expect(service.spec.clusterIP).toBe('None');
      expect(labelsMatch(service.spec.selector, set.spec.template.metadata.labels)).toBe(true);
      const claims = set.spec.volumeClaimTemplates.map((c: any) => c.metadata.name);
      expect(claims.length).toBeGreaterThan(0);
      const mounted = set.spec.template.spec.containers.flatMap((c: any) => c.volumeMounts.map((m: any) => m.name));
      for (const claim of claims) expect(mounted).toContain(claim);
    }
  });

  it('runs every Redis with AOF persistence and noeviction, its data on the persistent volume', () => {
    for (const set of redisWorkloads()) {
      const [container] = set.spec.template.spec.containers;
      const settings = redisSettings(set, container);
      expect({ set: set.metadata.name, appendonly: settings.appendonly, policy: settings['maxmemory-policy'] }).toEqual({
        set: set.metadata.name,
        appendonly: 'yes',
        policy: 'noeviction',
      });
      const claims = set.spec.volumeClaimTemplates.map((c: any) => c.metadata.name);
      expect(claims).toContain(container.volumeMounts.find((m: any) => m.mountPath === settings.dir)?.name);
    }
  });

  it('points REDIS_URL at that Redis, and S3_URL at MinIO with the credentials MinIO is given', () => {
    const frontier = one('Deployment', 'frontier');
    const env = environment(frontier, frontier.spec.template.spec.containers[0]);
    const [redis] = redisWorkloads();
    const target = parseRedisUrl(env.REDIS_URL);
    // A node is the Service (one Redis) or a pod by the name its headless Service gives it (<set>-<ordinal>.<service>).
    const service = one('Service', redis.spec.serviceName);
    const pods = Array.from({ length: redis.spec.replicas }, (_, i) => `${redis.metadata.name}-${i}.${service.metadata.name}`);
    for (const node of target.nodes) {
      expect([service.metadata.name, ...pods]).toContain(node.host);
      expect(service.spec.ports.map((p: any) => p.port)).toContain(node.port);
    }
    expect(redisSettings(redis, redis.spec.template.spec.containers[0])['cluster-enabled'] ?? 'no').toBe(target.cluster ? 'yes' : 'no');
    const s3 = new URL(env.S3_URL);
    expect(one('Service', s3.hostname).spec.ports.map((p: any) => p.port)).toContain(Number(s3.port));
    const minio = one('StatefulSet', 'minio');
    const minioEnv = environment(minio, minio.spec.template.spec.containers[0]);
    expect([decodeURIComponent(s3.username), decodeURIComponent(s3.password)]).toEqual([minioEnv.MINIO_ROOT_USER, minioEnv.MINIO_ROOT_PASSWORD]);
    expect(minioEnv.MINIO_ROOT_PASSWORD.length).toBeGreaterThanOrEqual(8); // MinIO refuses shorter root passwords
  });

  it('runs PostgreSQL as a StatefulSet, its data on a persistent volume, its credentials from a Secret', () => {
    const set = one('StatefulSet', 'postgres');
    const service = one('Service', set.spec.serviceName);
    expect(labelsMatch(service.spec.selector, set.spec.template.metadata.labels)).toBe(true);
    const [container] = set.spec.template.spec.containers;
    expect(container.image).toMatch(/^postgres:\d+/);
    const env = environment(set, container);
    const claims = set.spec.volumeClaimTemplates.map((c: any) => c.metadata.name);
    const dataMount = container.volumeMounts.find((m: any) => env.PGDATA.startsWith(`${m.mountPath}/`));
    expect(claims).toContain(dataMount?.name);
    for (const name of ['POSTGRES_USER', 'POSTGRES_PASSWORD', 'POSTGRES_DB']) {
      const variable = container.env.find((v: any) => v.name === name);
      expect({ name, fromSecret: variable?.valueFrom?.secretKeyRef?.name }).toEqual({ name, fromSecret: generated('Secret', 'postgres-credentials').metadata.name });
    }
    expect(container.readinessProbe.exec.command.join(' ')).toMatch(/pg_isready/);
  });

  it('gives RECORDS_URL, from that Secret, to every service that keeps records (and only those), pointed at PostgreSQL with its credentials', () => {
    const set = one('StatefulSet', 'postgres');
    const db = environment(set, set.spec.template.spec.containers[0]);
    const keepers = servicesKeepingRecords();
    expect(keepers.sort()).toEqual(['content-seen', 'control-plane', 'downloader']);
    for (const deployment of all('Deployment')) {
      const [container] = deployment.spec.template.spec.containers;
      const name = deployment.metadata.name;
      const url = environment(deployment, container).RECORDS_URL;
      expect({ name, records: url !== undefined }).toEqual({ name, records: keepers.includes(name) });
      if (url === undefined) continue;
      const variable = container.env.find((v: any) => v.name === 'RECORDS_URL');
      expect({ name, fromSecret: variable?.valueFrom?.secretKeyRef?.name }).toEqual({ name, fromSecret: generated('Secret', 'postgres-credentials').metadata.name });
      const target = new URL(url);
      expect(one('Service', target.hostname).spec.ports.map((p: any) => p.port)).toContain(Number(target.port));
      expect(one('Service', target.hostname).spec.selector).toEqual(set.spec.selector.matchLabels);
      expect([decodeURIComponent(target.username), decodeURIComponent(target.password), target.pathname]).toEqual([
        db.POSTGRES_USER,
        db.POSTGRES_PASSWORD,
        `/${db.POSTGRES_DB}`,
      ]);
    }
  });

  it('gives every crawler service the same REDIS_URL', () => {
    const urls = new Set(all('Deployment').flatMap((d) => d.spec.template.spec.containers.map((c: any) => environment(d, c).REDIS_URL)));
    expect(urls.size).toBe(1);
  });

  it('autoscales the downloader and the content parser on CPU (autoscaling/v2), leaving their replicas to the autoscaler', () => {
    const hpas = all('HorizontalPodAutoscaler');
    expect(hpas.map((h) => h.spec.scaleTargetRef.name)).toEqual(expect.arrayContaining(['downloader', 'content-parser']));
    for (const hpa of hpas) {
      expect(hpa.apiVersion).toBe('autoscaling/v2');
      const target = one(hpa.spec.scaleTargetRef.kind, hpa.spec.scaleTargetRef.name);
      expect(target).toBeDefined();
      expect(target.spec.replicas).toBeUndefined();
      expect(hpa.spec.metrics).toContainEqual(expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }));
      for (const container of target.spec.template.spec.containers) expect(container.resources.requests.cpu).toBeDefined(); // utilization needs it
      expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
    }
  });

  it('autoscales every Deployment but the singletons, by one autoscaler each; the singletons run one replica, their files say why', () => {
    for (const deployment of all('Deployment')) {
      const name = deployment.metadata.name;
      const single = SINGLETONS.includes(name);
      expect({ name, autoscalers: autoscalersOf(objects, name).length, replicas: deployment.spec.replicas }).toEqual({
        name,
        autoscalers: single ? 0 : 1,
        replicas: single ? 1 : undefined,
      });
      if (single) expect({ name, saysWhy: saysWhySingle(name) }).toEqual({ name, saysWhy: true });
    }
    for (const hpa of all('HorizontalPodAutoscaler')) {
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(1);
      expect(hpa.spec.behavior?.scaleDown?.stabilizationWindowSeconds).toBeGreaterThanOrEqual(300); // no flapping of the consumers
    }
  });

  it('gives every workload that runs several replicas or is autoscaled a disruption budget of one pod away at a time, and no other', () => {
    const workloads = [...all('Deployment'), ...all('StatefulSet')];
    const scales = (w: any) => (w.spec.replicas ?? 1) > 1 || (w.kind === 'Deployment' && autoscalersOf(objects, w.metadata.name).length > 0);
    const budgets = all('PodDisruptionBudget');
    for (const budget of budgets) {
      expect(budget.apiVersion).toBe('policy/v1');
      // maxUnavailable, not minAvailable: at one replica, minAvailable: 1 would refuse every eviction (a drain hangs).
      expect({ budget: budget.metadata.name, maxUnavailable: budget.spec.maxUnavailable, minAvailable: budget.spec.minAvailable }).toEqual({
        budget: budget.metadata.name,
        maxUnavailable: 1,
        minAvailable: undefined,
      });
      // A budget's selector picks the pods of exactly one workload (the API forbids overlapping budgets in effect).
      const covered = workloads.filter((w) => labelsMatch(budget.spec.selector.matchLabels, w.spec.template.metadata.labels));
      expect({ budget: budget.metadata.name, covers: covered.length }).toEqual({ budget: budget.metadata.name, covers: 1 });
    }
    for (const workload of workloads) {
      const covering = budgets.filter((b) => labelsMatch(b.spec.selector.matchLabels, workload.spec.template.metadata.labels));
      expect({ workload: workload.metadata.name, budgets: covering.length }).toEqual({ workload: workload.metadata.name, budgets: scales(workload) ? 1 : 0 });
    }
  });

  it('exposes the control plane through a Service on its HTTP port', () => {
    const service = one('Service', 'control-plane');
    const [container] = one('Deployment', 'control-plane').spec.template.spec.containers;
    expect(labelsMatch(service.spec.selector, one('Deployment', 'control-plane').spec.template.metadata.labels)).toBe(true);
    expect(containerPort(container, service.spec.ports[0].targetPort)).toBe(loadConfig(environment(one('Deployment', 'control-plane'), container)).port);
  });

  it('gives the control plane its token from a Secret that no other workload reads, so it listens beyond loopback once the placeholder is replaced', () => {
    const readers = [...all('Deployment'), ...all('StatefulSet')].filter((w) =>
      podSpecOf(w)!.containers.some((c: any) => environment(w, c).CONTROL_PLANE_TOKEN !== undefined),
    );
    expect(readers.map((w) => w.metadata.name)).toEqual(['control-plane']);
    const deployment = one('Deployment', 'control-plane');
    const env = environment(deployment, deployment.spec.template.spec.containers[0]);
    // Shipped, the token is the placeholder anyone can read here: the control plane refuses it at start.
    expect(() => listenPlan(loadConfig(env), true)).toThrow(/still the placeholder/);
    const config = loadConfig({ ...env, CONTROL_PLANE_TOKEN: 'f'.repeat(64) });
    expect(listenPlan(config, true).address).toBe('0.0.0.0');
    expect(generated('Secret', 'control-plane-token')).toBeDefined();
  });

  it('references only ConfigMaps and Secrets that it creates', () => {
    const names = (kind: string) => new Set(all(kind).map((o) => o.metadata.name));
    for (const workload of workloads()) {
      const pod = podSpecOf(workload)!;
      for (const volume of pod.volumes ?? []) {
        if (volume.configMap) expect(names('ConfigMap')).toContain(volume.configMap.name);
        if (volume.secret) expect(names('Secret')).toContain(volume.secret.secretName);
      }
      for (const container of pod.containers) environment(workload, container); // throws on a missing reference
    }
    expect(generated('ConfigMap', 'crawler-config')).toBeDefined();
    expect(generated('Secret', 'crawler-secrets')).toBeDefined();
  });
});

describe('k8s/ with the KEDA component (queue-depth autoscaling of the content parser)', () => {
  const withKeda = () => kustomizeBuild(k8sWithComponents(['keda']));

  it(`is valid: Kubernetes ${KUBERNETES_VERSION} and the KEDA CRDs (@kubernetes-models/keda ${packageVersion('@kubernetes-models/keda')})`, () => {
    const keda = withKeda();
    expect(schemaProblems(keda)).toEqual([]);
    expect(strictTypeProblems(keda)).toEqual([]);
  });

  it('leaves every Deployment but the singletons under exactly one autoscaler, each with its disruption budget', () => {
    const keda = withKeda();
    for (const deployment of keda.filter((o) => o.kind === 'Deployment') as any[]) {
      const name = deployment.metadata.name;
      const budgets = keda.filter((o: any) => o.kind === 'PodDisruptionBudget' && labelsMatch(o.spec.selector.matchLabels, deployment.spec.template.metadata.labels));
      const single = SINGLETONS.includes(name);
      expect({ name, autoscalers: autoscalersOf(keda, name).length, budgets: budgets.length }).toEqual({ name, autoscalers: single ? 0 : 1, budgets: single ? 0 : 1 });
    }
  });

  it('replaces the CPU autoscaler of its target and scales on the pages waiting in the queue that target consumes', () => {
    const keda = withKeda();
    const scaled = keda.filter((o) => o.kind === 'ScaledObject') as any[];
    expect(scaled.length).toBeGreaterThan(0);
    for (const object of scaled) {
      const target = object.spec.scaleTargetRef.name;
      expect(keda.find((o) => o.kind === 'Deployment' && o.metadata.name === target)).toBeDefined();
      expect(keda.filter((o: any) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === target)).toEqual([]);
      // Scaled on pages, not on jobs (a job is an envelope of up to 100 pages): the messages gauge of the
      // queue the target consumes, the max over processes (each reports the same shared number).
      expect(object.spec.triggers.filter((t: any) => t.type === 'redis')).toEqual([]);
      // The queue of the service map the target consumes: one queue, or the number would not say its load.
      const consumes = SERVICES_MAP.find((s) => s.name === target)?.consumes ?? [];
      expect({ target, queues: consumes.length }).toEqual({ target, queues: 1 });
      const queries = object.spec.triggers.filter((t: any) => t.type === 'prometheus');
      expect(queries.length).toBe(1);
      for (const trigger of queries) {
        expect(trigger.metadata.query).toBe(`max(crawler_queue_messages{queue="${consumes[0].queue}",state="waiting"})`);
        expect(trigger.metadata.serverAddress).toMatch(/^https?:\/\/[^/]+$/);
        expect(Number(trigger.metadata.threshold)).toBeGreaterThanOrEqual(100);
      }
    }
  });
});

describe('k8s/ with the redis-cluster component (six nodes formed into three masters and three replicas)', () => {
  const { objects, all, one, environment, expandedArgs } = inspect(kustomizeBuild(k8sWithComponents(['redis-cluster'])));
  const set = one('StatefulSet', 'redis-cluster');
  const service = one('Service', set.spec.serviceName);
  const pods = Array.from({ length: set.spec.replicas }, (_, i) => `${set.metadata.name}-${i}.${service.metadata.name}`);
  const port = service.spec.ports.find((p: any) => p.name === 'redis').port;

  it('replaces the single Redis: no redis StatefulSet or Service left, every service on the cluster', () => {
    expect(objects.filter((o) => o.metadata.name === 'redis')).toEqual([]);
    for (const deployment of all('Deployment')) {
      const target = parseRedisUrl(environment(deployment, deployment.spec.template.spec.containers[0]).REDIS_URL);
      expect({ deployment: deployment.metadata.name, cluster: target.cluster }).toEqual({ deployment: deployment.metadata.name, cluster: true });
      expect(target.nodes.map((n) => `${n.host}:${n.port}`)).toEqual(pods.map((pod) => `${pod}:${port}`));
    }
  });

  it('runs six nodes, started in parallel, each announcing the host name its headless Service gives it', () => {
    expect(set.spec.replicas).toBe(6);
    expect(set.spec.podManagementPolicy).toBe('Parallel');
    expect(service.spec.publishNotReadyAddresses).toBe(true); // nodes find one another before they are ready
    const [container] = set.spec.template.spec.containers;
    const args = expandedArgs(set, container);
    expect(args[args.indexOf('--cluster-announce-hostname') + 1]).toBe(pods[0]);
    const conf: string = one('ConfigMap', set.spec.template.spec.volumes.find((v: any) => v.configMap).configMap.name).data['redis.conf'];
    expect(conf).toMatch(/^cluster-enabled yes$/m);
    expect(conf).toMatch(/^cluster-preferred-endpoint-type hostname$/m);
    expect(conf).toMatch(new RegExp(`^port ${container.ports.find((p: any) => p.name === 'redis').containerPort}$`, 'm'));
    // The cluster bus is the data port + 10000, reachable through the Service.
    const bus = container.ports.find((p: any) => p.name === 'cluster-bus').containerPort;
    expect(bus).toBe(port + 10000);
    expect(service.spec.ports.map((p: any) => p.port)).toContain(bus);
  });

  it('forms the cluster with a Job that waits for all six nodes and makes one replica per master', () => {
    const job = one('Job', 'redis-cluster-init');
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('OnFailure');
    const [container] = pod.containers;
    const env = environment(job, container);
    expect(env.REDIS_CLUSTER_NODES.split(/\s+/)).toEqual(pods.map((p) => `${p}:${port}`));
    const script = container.command[container.command.length - 1];
    const mount = container.volumeMounts.find((m: any) => script.startsWith(`${m.mountPath}/`));
    const volume = pod.volumes.find((v: any) => v.name === mount.name);
    const text: string = one('ConfigMap', volume.configMap.name).data[script.slice(mount.mountPath.length + 1)];
    expect(text).toBe(readFileSync(join(ROOT, 'k8s/redis-cluster/form-cluster.sh'), 'utf8')); // the script test/deploy/form-cluster.test.ts runs
    expect(text).toMatch(/redis-cli --cluster create \$addresses --cluster-replicas 1 --cluster-yes/);
    expect(volume.configMap.name).toBe('redis-cluster-scripts'); // a fixed name: a Job's pod template cannot change
  });
});
