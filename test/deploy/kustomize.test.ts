import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { k8sWithComponents, ROOT } from './deploy-support';
import { KObject, kustomizeBuild, kustomizeHash, KustomizeError, splitImage } from './kustomize';

/**
 * The tests' kustomize (test/deploy/kustomize.ts) against kustomize's own expectations: its hasher's test
 * vectors, loud failures on what it does not implement, and, where a kustomize binary is installed
 * (`kubectl kustomize` or `kustomize build`), the very same output for k8s/ and for every feature used.
 */

const sortKey = (o: KObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const sorted = (objects: KObject[]) => [...objects].sort((a, b) => sortKey(a).localeCompare(sortKey(b)));

/** `kustomize build` or `kubectl kustomize`, whichever is installed (asked for its version, offline). */
function realKustomize(): ((dir: string) => KObject[]) | undefined {
  const candidates = [
    { probe: ['kustomize', 'version'], build: ['kustomize', 'build'] },
    { probe: ['kubectl', 'version', '--client'], build: ['kubectl', 'kustomize'] },
  ];
  for (const { probe, build } of candidates) {
    if (spawnSync(probe[0], probe.slice(1), { encoding: 'utf8', timeout: 20_000 }).status !== 0) continue;
    return (dir) => parseAllDocuments(execFileSync(build[0], [...build.slice(1), dir], { encoding: 'utf8' })).map((d) => d.toJS() as KObject);
  }
  return undefined;
}
const kustomize = realKustomize();
const withKustomize = kustomize ? it : it.skip;
if (!kustomize) process.stderr.write('test/deploy: no kustomize or kubectl on PATH; the comparison with the real kustomize is skipped\n');

function writeTree(files: Record<string, string>): string {
  const dir = tempDir('kustomize-');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: example/web:1.0
          envFrom:
            - configMapRef: {name: settings}
            - secretRef: {name: credentials}
          env:
            - name: TOKEN
              valueFrom:
                secretKeyRef: {name: credentials, key: token}
      initContainers:
        - name: init
          image: busybox
      volumes:
        - name: settings
          configMap: {name: settings}
        - name: fixed
          configMap: {name: fixed}
        - name: credentials
          secret: {secretName: credentials}
`;

/** A kustomization using every feature the builder implements. */
const FEATURES = {
  'base/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [deployment.yaml, hpa.yaml]
configMapGenerator:
  - name: settings
    literals: ["A=1", "B=<x>&y", "QUOTED='spaced value'"]
    files: [notes.txt, renamed=notes.txt]
  - name: fixed
    literals: [C=3]
    options: {disableNameSuffixHash: true}
secretGenerator:
  - name: credentials
    literals: [token=s3cr3t, short=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx, wrapped=yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy, long=postgres://user:password@postgres:5432/db-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz]
`,
  'base/deployment.yaml': DEPLOYMENT,
  'base/notes.txt': '# a file\nwith lines\n',
  'base/hpa.yaml': `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: spare}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 2
`,
  'overlay/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: shop
labels:
  - pairs: {app.kubernetes.io/part-of: shop}
    includeTemplates: true
resources: [namespace.yaml, ../base, store.yaml]
components: [../component]
configMapGenerator:
  - name: local
    literals: [D=4]
images:
  - {name: example/web, newName: registry.example/web, newTag: "2.0"}
  - {name: busybox, digest: "sha256:0000000000000000000000000000000000000000000000000000000000000000"}
`,
  'overlay/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n',
  'overlay/store.yaml': `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: store}
spec:
  serviceName: store
  selector:
    matchLabels: {app: store}
  template:
    metadata:
      labels: {app: store}
    spec:
      containers: [{name: store, image: redis:7}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: 1Gi}}
`,
  'component/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources: [extra.yaml]
configMapGenerator:
  - name: settings
    behavior: merge
    literals: [B=merged, E=5]
  - name: local
    behavior: merge
    literals: [F=6]
secretGenerator:
  - name: credentials
    behavior: merge
    literals: [extra=more]
patches:
  - patch: |-
      $patch: delete
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata:
        name: spare
`,
  'component/extra.yaml': 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: extra\n',
};

describe('the tests’ kustomize builder', () => {
  afterAll(removeTempDirs);

  it('hashes generated ConfigMaps and Secrets as kustomize’s hasher does (its own test vectors)', () => {
    // kustomize api/hasher/hasher_test.go
    expect(kustomizeHash({ kind: 'ConfigMap' })).toBe('6ct58987ht');
    expect(kustomizeHash({ kind: 'ConfigMap', data: { one: '' } })).toBe('9g67k2htb6');
    expect(kustomizeHash({ kind: 'Secret', type: 'my-type' })).toBe('5gmgkf8578');
    expect(kustomizeHash({ kind: 'Secret', type: 'my-type', data: { one: '' } })).toBe('74bd68bm66');
  });

  it('builds every feature it implements', () => {
    const dir = writeTree(FEATURES);
    const objects = kustomizeBuild(join(dir, 'overlay'));
    const byName = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name.startsWith(name)) as any;
    expect(objects.map(sortKey).sort()).toEqual(
      [
        'ConfigMap/shop/fixed',
        `ConfigMap/shop/${byName('ConfigMap', 'local-').metadata.name}`,
        `ConfigMap/shop/${byName('ConfigMap', 'settings-').metadata.name}`,
        `Secret/shop/${byName('Secret', 'credentials-').metadata.name}`,
        'Deployment/shop/web',
        'HorizontalPodAutoscaler/shop/web',
        'Namespace//shop',
        'ServiceAccount/shop/extra',
        'StatefulSet/shop/store',
      ].sort(),
    );
    const settings = byName('ConfigMap', 'settings-');
    expect(settings.data).toEqual({ A: '1', B: 'merged', E: '5', QUOTED: 'spaced value', 'notes.txt': '# a file\nwith lines\n', renamed: '# a file\nwith lines\n' });
    expect(byName('ConfigMap', 'local-').data).toEqual({ D: '4', F: '6' });
    const base64 = (value: string) => Buffer.from(value).toString('base64');
    const wrapped = base64('y'.repeat(52)); // 72 characters: kustomize breaks lines at 70, each ending in a newline
    expect(byName('Secret', 'credentials-').data).toEqual({
      token: base64('s3cr3t'),
      extra: base64('more'),
      short: base64('x'.repeat(51)),
      wrapped: `${wrapped.slice(0, 70)}\n${wrapped.slice(70)}\n`,
      long: expect.stringMatching(/^([A-Za-z0-9+/=]{70}\n){2}[A-Za-z0-9+/=]{1,70}\n$/),
    });
    const pod = byName('Deployment', 'web').spec.template;
    expect(pod.metadata.labels).toEqual({ app: 'web', 'app.kubernetes.io/part-of': 'shop' });
    expect(pod.spec.containers[0].image).toBe('registry.example/web:2.0');
    expect(pod.spec.initContainers[0].image).toMatch(/^busybox@sha256:0+$/);
    expect(pod.spec.containers[0].envFrom).toEqual([
      { configMapRef: { name: settings.metadata.name } },
      { secretRef: { name: byName('Secret', 'credentials-').metadata.name } },
    ]);
    expect(pod.spec.volumes.map((v: any) => v.configMap?.name ?? v.secret?.secretName)).toEqual([
      settings.metadata.name,
      'fixed',
      byName('Secret', 'credentials-').metadata.name,
    ]);
    expect(byName('StatefulSet', 'store').spec.volumeClaimTemplates[0].metadata.labels).toEqual({ 'app.kubernetes.io/part-of': 'shop' });
    expect(byName('Namespace', 'shop').metadata.namespace).toBeUndefined();
  });

  it('fails loudly on kustomization fields and forms it does not implement', () => {
    const base = { 'k/deployment.yaml': DEPLOYMENT };
    const cases: Record<string, string> = {
      'unknown field': 'resources: [deployment.yaml]\nnamePrefix: x-\n',
      commonLabels: 'resources: [deployment.yaml]\ncommonLabels: {a: b}\n',
      'label selectors': 'resources: [deployment.yaml]\nlabels: [{pairs: {a: b}, includeSelectors: true}]\n',
      'generator envs': 'configMapGenerator: [{name: x, envs: [a.env]}]\n',
      'generator behavior replace': 'configMapGenerator: [{name: x, literals: [a=b]}, {name: x, behavior: replace, literals: [a=c]}]\n',
      'merge into nothing': 'configMapGenerator: [{name: x, behavior: merge, literals: [a=b]}]\n',
      'generator options': 'configMapGenerator: [{name: x, literals: [a=b], options: {labels: {a: b}}}]\n',
      'merge patch': 'resources: [deployment.yaml]\npatches: [{patch: "apiVersion: apps/v1\\nkind: Deployment\\nmetadata: {name: web}\\nspec: {replicas: 2}"}]\n',
      'patch target': 'resources: [deployment.yaml]\npatches: [{path: p.yaml, target: {kind: Deployment}}]\n',
      'remote resource': 'resources: [https://github.com/example/repo//k8s?ref=main]\n',
      'missing patch target': 'resources: [deployment.yaml]\npatches: [{patch: "$patch: delete\\napiVersion: v1\\nkind: Service\\nmetadata: {name: none}"}]\n',
      'duplicate object': 'resources: [deployment.yaml, deployment.yaml]\n',
      'image field': 'resources: [deployment.yaml]\nimages: [{name: a, newImage: b}]\n',
    };
    const accepted = Object.entries(cases).filter(([, kustomization]) => {
      const dir = writeTree({ ...base, 'k/kustomization.yaml': kustomization });
      try {
        kustomizeBuild(join(dir, 'k'));
        return true;
      } catch (error) {
        return !(error instanceof KustomizeError);
      }
    });
    expect(accepted.map(([what]) => what)).toEqual([]);
  });

  it('splits image references as kustomize does (a registry port is part of the name)', () => {
    expect(splitImage('crawler')).toEqual({ name: 'crawler', tag: undefined, digest: undefined });
    expect(splitImage('registry:5000/crawler:0.1.0')).toEqual({ name: 'registry:5000/crawler', tag: '0.1.0', digest: undefined });
    expect(splitImage('quay.io/minio/minio@sha256:ab')).toEqual({ name: 'quay.io/minio/minio', tag: undefined, digest: 'sha256:ab' });
  });

  withKustomize('builds exactly what the real kustomize builds: every implemented feature', () => {
    const dir = writeTree(FEATURES);
    expect(sorted(kustomizeBuild(join(dir, 'overlay')))).toEqual(sorted(kustomize!(join(dir, 'overlay'))));
  });

  withKustomize('builds exactly what the real kustomize builds: k8s/, and k8s/ with each of its components', () => {
    expect(sorted(kustomizeBuild(join(ROOT, 'k8s')))).toEqual(sorted(kustomize!(join(ROOT, 'k8s'))));
    for (const components of [['keda'], ['redis-cluster'], ['keda', 'redis-cluster']]) {
      const copy = k8sWithComponents(components);
      expect(sorted(kustomizeBuild(copy))).toEqual(sorted(kustomize!(copy)));
    }
  });
});
