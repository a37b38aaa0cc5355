import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '@crawler/config';
import { QueueName } from '@crawler/contracts';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { configProblem, mainOf, ROOT, runEntrypoint, SERVICES, unknownEnvNames } from './deploy-support';
import { KObject, kustomizeBuild, podSpecOf, splitImage } from './kustomize';
import { KUBERNETES_VERSION, modelModule, packageVersion, schemaProblems, strictTypeProblems } from './kubernetes-schemas';

/**
 * k8s/ as `kubectl apply -k k8s/` would install it, checked offline: every object valid for Kubernetes
 * v1.33 (kubernetes-models' OpenAPI validators, and its types for unknown fields), and consistent with the
 * crawler itself: a Deployment per service running that service, probes on the /health it serves, only
 * settings the configuration reads, and values it accepts.
 */

const objects = kustomizeBuild(join(ROOT, 'k8s'));
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
    if (from.configMapRef) Object.assign(env, one('ConfigMap', from.configMapRef.name)?.data ?? fail(`${object.metadata.name}: no ConfigMap ${from.configMapRef.name}`));
    if (from.secretRef) {
      const secret = one('Secret', from.secretRef.name) ?? fail(`${object.metadata.name}: no Secret ${from.secretRef.name}`);
      for (const key of Object.keys(secret.data)) env[key] = decode(secret, key);
    }
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom;
    if (ref?.configMapKeyRef) env[variable.name] = one('ConfigMap', ref.configMapKeyRef.name).data[ref.configMapKeyRef.key];
    else if (ref?.secretKeyRef) env[variable.name] = decode(one('Secret', ref.secretKeyRef.name), ref.secretKeyRef.key);
    else if (ref) fail(`${object.metadata.name}: valueFrom ${JSON.stringify(ref)} is not resolved by this test`);
    else env[variable.name] = variable.value ?? '';
  }
  return env;
}

function fail(message: string): never {
  throw new Error(message);
}

/** The container port a probe or Service port names (by name or number). */
function containerPort(container: any, port: string | number): number | undefined {
  const found = (container.ports ?? []).find((p: any) => p.name === port || p.containerPort === port);
  return found?.containerPort;
}

/** The queue each service that may be scaled on queue depth consumes. */
const CONSUMES: Record<string, QueueName> = {
  'content-parser': QueueName.Parse,
  'content-seen': QueueName.ContentSeen,
  'url-extractor': QueueName.ExtractLinks,
  'url-filter': QueueName.FilterUrls,
  'url-seen': QueueName.SeenUrls,
  'dns-resolver': QueueName.DnsResolve,
};

const labelsMatch = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** Kubernetes quantities in base units, to compare requests with limits. */
function quantity(value: string | number): number {
  const m = /^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(value));
  if (!m) throw new Error(`not a quantity: ${value}`);
  const unit = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] ?? ''] ?? 1;
  return parseFloat(m[1]) * unit;
}

describe(`k8s/ (kustomize build, validated against Kubernetes ${KUBERNETES_VERSION})`, () => {
  afterAll(removeTempDirs);

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

  it('has a Deployment per service under apps/ (all but the crawl CLI) that runs that very service', () => {
    const dir = tempDir('entrypoint-');
    expect(all('Deployment').map((d) => d.metadata.name).sort()).toEqual([...SERVICES].sort());
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
        // Readiness checks Redis and S3 within HEALTH_CHECK_TIMEOUT_MS (2 s) each: the probe must wait longer.
        expect(container.readinessProbe.timeoutSeconds).toBeGreaterThan(2);
      }
    }
  });

  it('sets resource requests and limits on every container, requests within limits', () => {
    for (const workload of [...all('Deployment'), ...all('StatefulSet')]) {
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
    for (const name of ['redis', 'minio']) {
      const set = one('StatefulSet', name);
      expect(set).toBeDefined();
      const service = one('Service', set.spec.serviceName);
      expect(service.spec.clusterIP).toBe('None');
      expect(labelsMatch(service.spec.selector, set.spec.template.metadata.labels)).toBe(true);
      const claims = set.spec.volumeClaimTemplates.map((c: any) => c.metadata.name);
      expect(claims.length).toBeGreaterThan(0);
      const mounted = set.spec.template.spec.containers.flatMap((c: any) => c.volumeMounts.map((m: any) => m.name));
      for (const claim of claims) expect(mounted).toContain(claim);
    }
    const redisArgs: string[] = one('StatefulSet', 'redis').spec.template.spec.containers[0].args;
    expect(redisArgs.join(' ')).toMatch(/--appendonly yes/);
    expect(redisArgs.join(' ')).toMatch(/--maxmemory-policy noeviction/);
  });

  it('points REDIS_URL and S3_URL at those Services, with the credentials MinIO is given', () => {
    const frontier = one('Deployment', 'frontier');
    const env = environment(frontier, frontier.spec.template.spec.containers[0]);
    const redis = new URL(env.REDIS_URL);
    expect(one('Service', redis.hostname).spec.ports.map((p: any) => p.port)).toContain(Number(redis.port || 6379));
    const s3 = new URL(env.S3_URL);
    expect(one('Service', s3.hostname).spec.ports.map((p: any) => p.port)).toContain(Number(s3.port));
    const minio = one('StatefulSet', 'minio');
    const minioEnv = environment(minio, minio.spec.template.spec.containers[0]);
    expect([decodeURIComponent(s3.username), decodeURIComponent(s3.password)]).toEqual([minioEnv.MINIO_ROOT_USER, minioEnv.MINIO_ROOT_PASSWORD]);
    expect(minioEnv.MINIO_ROOT_PASSWORD.length).toBeGreaterThanOrEqual(8); // MinIO refuses shorter root passwords
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

  it('exposes the control plane through a Service on its HTTP port', () => {
    const service = one('Service', 'control-plane');
    const [container] = one('Deployment', 'control-plane').spec.template.spec.containers;
    expect(labelsMatch(service.spec.selector, one('Deployment', 'control-plane').spec.template.metadata.labels)).toBe(true);
    expect(containerPort(container, service.spec.ports[0].targetPort)).toBe(loadConfig(environment(one('Deployment', 'control-plane'), container)).port);
  });

  it('references only ConfigMaps and Secrets that it creates', () => {
    const names = (kind: string) => new Set(all(kind).map((o) => o.metadata.name));
    for (const workload of [...all('Deployment'), ...all('StatefulSet')]) {
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

  describe('with the KEDA component (queue-depth autoscaling of the content parser)', () => {
    const withKeda = () => {
      const copy = tempDir('k8s-keda-');
      cpSync(join(ROOT, 'k8s'), copy, { recursive: true });
      const file = join(copy, 'kustomization.yaml');
      writeFileSync(file, `${readFileSync(file, 'utf8')}\ncomponents:\n  - keda\n`);
      return kustomizeBuild(copy);
    };

    it(`is valid: Kubernetes ${KUBERNETES_VERSION} and the KEDA CRDs (@kubernetes-models/keda ${packageVersion('@kubernetes-models/keda')})`, () => {
      const keda = withKeda();
      expect(schemaProblems(keda)).toEqual([]);
      expect(strictTypeProblems(keda)).toEqual([]);
    });

    it('replaces the CPU autoscaler of its target and watches the queue that target consumes', () => {
      const keda = withKeda();
      const scaled = keda.filter((o) => o.kind === 'ScaledObject') as any[];
      expect(scaled.length).toBeGreaterThan(0);
      const config = loadConfig(generated('ConfigMap', 'crawler-config').data);
      for (const object of scaled) {
        const target = object.spec.scaleTargetRef.name;
        expect(keda.find((o) => o.kind === 'Deployment' && o.metadata.name === target)).toBeDefined();
        expect(keda.filter((o: any) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === target)).toEqual([]);
        for (const trigger of object.spec.triggers.filter((t: any) => t.type === 'redis')) {
          const [host, port] = trigger.metadata.address.split(':');
          expect(host).toBe(`redis.${object.metadata.namespace}.svc.cluster.local`);
          expect(one('Service', 'redis').spec.ports.map((p: any) => p.port)).toContain(Number(port));
          // BullMQ keeps a queue's waiting jobs in the list <prefix>:<queue>:wait.
          expect(trigger.metadata.listName).toBe(`${config.prefix}:${CONSUMES[target]}:wait`);
        }
      }
    });
  });
});
