import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * A small `kustomize build` for the tests, where no kustomize binary can be assumed. It implements the
 * subset of kustomize (v5) that k8s/ uses, the way kustomize does it, and throws on any field or form it
 * does not implement, so that a manifest never silently builds differently here than in `kubectl apply -k`:
 *
 * - `resources`: YAML files (several documents each) and directories holding a kustomization;
 * - `components`: directories holding a `kind: Component`, applied to what the parent accumulated so far;
 * - `namespace`: set on every namespaced object (cluster-scoped kinds are left alone);
 * - `labels` with `pairs` and `includeTemplates` (pod templates and StatefulSet claim templates), without
 *   `includeSelectors`;
 * - `configMapGenerator` / `secretGenerator` with `literals` and `files`, `options.disableNameSuffixHash`,
 *   `behavior: merge` (into what a parent or an earlier generator made), the content-hash name suffix
 *   computed as kustomize's hasher does, and the references to the generated names rewritten in pod specs;
 * - `images` (`name`, `newName`, `newTag`, `digest`);
 * - `patches` whose patch is a strategic-merge `$patch: delete` of one object.
 *
 * When a kustomize is at hand, test/deploy compares this builder's output with it.
 */

export interface KObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

export class KustomizeError extends Error {
  constructor(where: string, message: string) {
    super(`${where}: ${message}`);
    this.name = 'KustomizeError';
  }
}

const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
const KINDS = {
  Kustomization: 'kustomize.config.k8s.io/v1beta1',
  Component: 'kustomize.config.k8s.io/v1alpha1',
} as const;
type KustomizationKind = keyof typeof KINDS;
const IMPLEMENTED_FIELDS = new Set([
  'apiVersion',
  'kind',
  'resources',
  'components',
  'namespace',
  'labels',
  'configMapGenerator',
  'secretGenerator',
  'images',
  'patches',
]);

/** Kinds without a namespace (kustomize's namespace transformer leaves them alone). */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'StorageClass',
  'CSIDriver',
  'CSINode',
  'VolumeAttachment',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'APIService',
  'PriorityClass',
  'RuntimeClass',
  'IngressClass',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'ClusterTriggerAuthentication',
]);

/** Kinds whose namespace handling in kustomize goes beyond metadata.namespace (subjects, webhooks…). */
const NAMESPACE_SPECIAL = new Set([
  'RoleBinding',
  'ClusterRoleBinding',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'APIService',
  'CustomResourceDefinition',
]);

/** Workload kinds and the path of their pod template (kustomize's templateLabels field specs). */
const POD_TEMPLATE_PATHS: Record<string, string[]> = {
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  ReplicationController: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

interface Generated {
  object: KObject;
  hashed: boolean;
}

interface Accumulator {
  objects: KObject[];
  generated: Map<KObject, Generated>;
}

/** `kustomize build DIR`: the objects, in no particular order. */
export function kustomizeBuild(dir: string): KObject[] {
  const acc: Accumulator = { objects: [], generated: new Map() };
  runKustomization(resolve(dir), 'Kustomization', acc, []);
  applyNameHashes(acc);
  return acc.objects;
}

function readKustomization(dir: string, expected: KustomizationKind): Record<string, unknown> {
  const file = KUSTOMIZATION_FILES.map((f) => join(dir, f)).find((f) => existsSync(f));
  if (!file) throw new KustomizeError(dir, 'no kustomization.yaml');
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  if (docs.length !== 1) throw new KustomizeError(file, 'a kustomization is one YAML document');
  if (docs[0].errors.length) throw new KustomizeError(file, docs[0].errors[0].message);
  const k = docs[0].toJS() as Record<string, unknown>;
  const kind = (k.kind ?? 'Kustomization') as string;
  if (kind !== expected) throw new KustomizeError(file, `expected kind ${expected}, found ${kind}`);
  if (k.apiVersion !== undefined && k.apiVersion !== KINDS[expected]) {
    throw new KustomizeError(file, `apiVersion ${String(k.apiVersion)} is not ${KINDS[expected]}`);
  }
  for (const field of Object.keys(k)) {
    if (!IMPLEMENTED_FIELDS.has(field)) throw new KustomizeError(file, `field "${field}" is not implemented by this builder`);
  }
  return k;
}

function list(value: unknown, where: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new KustomizeError(where, 'expected a list');
  return value;
}

function only(entry: Record<string, unknown>, allowed: string[], where: string): void {
  for (const key of Object.keys(entry)) {
    if (!allowed.includes(key)) throw new KustomizeError(where, `"${key}" is not implemented by this builder`);
  }
}

/**
 * kustomize's order: resources, generators, components (whose generators may merge into the parent's), then
 * the transformers.
 */
function runKustomization(dir: string, kind: KustomizationKind, acc: Accumulator, visiting: string[]): void {
  if (visiting.includes(dir)) throw new KustomizeError(dir, `cycle: ${[...visiting, dir].join(' → ')}`);
  const k = readKustomization(dir, kind);
  const where = join(dir, 'kustomization.yaml');
  // A sub-kustomization's transformers touch only what it builds itself; a component's touch everything.
  const own: Accumulator = kind === 'Component' ? acc : { objects: [], generated: acc.generated };

  for (const entry of list(k.resources, `${where} resources`)) {
    if (typeof entry !== 'string') throw new KustomizeError(where, 'a resource is a path');
    if (/^[a-z]+:\/\//i.test(entry) || entry.includes('?ref=')) throw new KustomizeError(where, `remote resource ${entry} is not implemented`);
    const path = resolve(dir, entry);
    if (!existsSync(path)) throw new KustomizeError(where, `resource ${entry} does not exist`);
    if (statSync(path).isDirectory()) runKustomization(path, 'Kustomization', own, [...visiting, dir]);
    else for (const object of readObjects(path)) add(own, object, path);
  }
  for (const entry of list(k.configMapGenerator, `${where} configMapGenerator`)) {
    generate(own, dir, entry as Record<string, unknown>, 'ConfigMap', where);
  }
  for (const entry of list(k.secretGenerator, `${where} secretGenerator`)) {
    generate(own, dir, entry as Record<string, unknown>, 'Secret', where);
  }
  for (const entry of list(k.components, `${where} components`)) {
    if (typeof entry !== 'string') throw new KustomizeError(where, 'a component is a path');
    runKustomization(resolve(dir, entry), 'Component', own, [...visiting, dir]);
  }
  for (const entry of list(k.patches, `${where} patches`)) applyPatch(own, dir, entry as Record<string, unknown>, where);
  if (k.namespace !== undefined) setNamespace(own.objects, String(k.namespace), where);
  for (const entry of list(k.labels, `${where} labels`)) addLabels(own.objects, entry as Record<string, unknown>, where);
  for (const entry of list(k.images, `${where} images`)) setImages(own.objects, entry as Record<string, unknown>, where);

  if (own !== acc) for (const object of own.objects) add(acc, object, dir);
}

function readObjects(file: string): KObject[] {
  const objects: KObject[] = [];
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    if (doc.errors.length) throw new KustomizeError(file, doc.errors[0].message);
    const value = doc.toJS() as KObject | null;
    if (value === null) continue; // an empty document (a trailing ---)
    if (typeof value.apiVersion !== 'string' || typeof value.kind !== 'string' || typeof value.metadata?.name !== 'string') {
      throw new KustomizeError(file, `a document without apiVersion, kind and metadata.name: ${JSON.stringify(value).slice(0, 120)}`);
    }
    if (value.kind === 'List' || value.kind.endsWith('List')) throw new KustomizeError(file, `${value.kind} is not implemented`);
    objects.push(value);
  }
  return objects;
}

const idOf = (o: KObject) => `${o.apiVersion.split('/').length > 1 ? o.apiVersion.split('/')[0] : ''}|${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;

function add(acc: Accumulator, object: KObject, where: string): void {
  if (acc.objects.some((o) => idOf(o) === idOf(object))) {
    throw new KustomizeError(where, `may not add resource with an already registered id: ${object.kind}/${object.metadata.name}`);
  }
  acc.objects.push(object);
}

function generate(acc: Accumulator, dir: string, entry: Record<string, unknown>, kind: 'ConfigMap' | 'Secret', where: string): void {
  only(entry, ['name', 'behavior', 'literals', 'files', 'options', ...(kind === 'Secret' ? ['type'] : [])], `${where} ${kind} generator`);
  const behavior = entry.behavior ?? 'create';
  if (behavior !== 'create' && behavior !== 'merge') throw new KustomizeError(where, `generator behavior ${String(behavior)} is not implemented by this builder`);
  const options = (entry.options ?? {}) as Record<string, unknown>;
  only(options, ['disableNameSuffixHash'], `${where} ${kind} generator options`);
  const name = entry.name;
  if (typeof name !== 'string' || !name) throw new KustomizeError(where, `a ${kind} generator needs a name`);
  const data: Record<string, string> = {};
  const put = (key: string, value: string) => {
    if (key in data) throw new KustomizeError(where, `${kind} ${name}: key ${key} given twice`);
    data[key] = value;
  };
  for (const literal of list(entry.literals, where)) {
    const text = String(literal);
    const eq = text.indexOf('=');
    if (eq <= 0) throw new KustomizeError(where, `literal "${text}" is not KEY=VALUE`);
    let value = text.slice(eq + 1);
    // kustomize strips one pair of matching quotes around a literal's value.
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) value = value.slice(1, -1);
    put(text.slice(0, eq), value);
  }
  for (const fileEntry of list(entry.files, where)) {
    const text = String(fileEntry);
    const eq = text.indexOf('=');
    const [key, path] = eq > 0 ? [text.slice(0, eq), text.slice(eq + 1)] : [basename(text), text];
    put(key, readFileSync(resolve(dir, path), 'utf8'));
  }
  const encoded = kind === 'ConfigMap' ? data : Object.fromEntries(Object.entries(data).map(([k, v]) => [k, secretBase64(v)]));
  if (behavior === 'merge') {
    const targets = [...acc.generated.values()].filter(({ object }) => object.kind === kind && object.metadata.name === name && acc.objects.includes(object));
    if (targets.length !== 1) throw new KustomizeError(where, `${kind} ${name} does not exist; cannot merge`);
    const target = targets[0].object as KObject & { data: Record<string, string> };
    target.data = { ...target.data, ...encoded };
    if (options.disableNameSuffixHash === true) targets[0].hashed = false;
    return;
  }
  const object: KObject =
    kind === 'ConfigMap'
      ? { apiVersion: 'v1', kind, metadata: { name }, data: encoded }
      : {
          apiVersion: 'v1',
          kind,
          metadata: { name },
          type: String(entry.type ?? 'Opaque'),
          data: encoded,
        };
  add(acc, object, where);
  acc.generated.set(object, { object, hashed: options.disableNameSuffixHash !== true });
}

/**
 * kustomize's api/hasher: sha256 of Go's json.Marshal of {kind, name, data[, type]} (keys sorted, <>&
 * escaped), its first 10 hex digits with 0 1 3 a e swapped for g h k m t. `name` is always "": the hasher
 * looks the name up as the single key "metadata/name", which no object has.
 */
export function kustomizeHash(object: { kind: string; data?: unknown; type?: string }): string {
  const encoded: Record<string, unknown> = { kind: object.kind, name: '', data: object.data ?? '' };
  if (object.kind === 'Secret') encoded.type = object.type ?? '';
  else if (object.kind !== 'ConfigMap') throw new Error(`no hash for ${object.kind}`);
  const hex = createHash('sha256').update(goJson(encoded)).digest('hex');
  return hex.slice(0, 10).replace(/[013ae]/g, (c) => ({ '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' })[c]!);
}

/** Go's encoding/json: map keys sorted, and <, >, &, U+2028, U+2029 escaped. */
function goJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    return JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029');
  }
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .sort()
    .map((k) => `${goJson(k)}:${goJson(record[k])}`)
    .join(',')}}`;
}

function applyNameHashes(acc: Accumulator): void {
  const renamed = new Map<string, string>(); // "<kind>|<namespace>|<old name>" → new name
  for (const { object, hashed } of acc.generated.values()) {
    if (!hashed || !acc.objects.includes(object)) continue;
    const name = `${object.metadata.name}-${kustomizeHash(object as { kind: string; data?: unknown; type?: string })}`;
    renamed.set(`${object.kind}|${object.metadata.namespace ?? ''}|${object.metadata.name}`, name);
    object.metadata.name = name;
  }
  for (const object of acc.objects) {
    const pod = podSpecOf(object);
    if (!pod) continue;
    const ns = object.metadata.namespace ?? '';
    const fix = (kind: string, holder: Record<string, unknown> | undefined, field: string) => {
      const old = holder?.[field];
      if (typeof old === 'string' && renamed.has(`${kind}|${ns}|${old}`)) holder![field] = renamed.get(`${kind}|${ns}|${old}`);
    };
    for (const container of [...list(pod.containers, 'containers'), ...list(pod.initContainers, 'initContainers')] as Record<string, any>[]) {
      for (const from of list(container.envFrom, 'envFrom') as Record<string, any>[]) {
        fix('ConfigMap', from.configMapRef, 'name');
        fix('Secret', from.secretRef, 'name');
      }
      for (const env of list(container.env, 'env') as Record<string, any>[]) {
        fix('ConfigMap', env.valueFrom?.configMapKeyRef, 'name');
        fix('Secret', env.valueFrom?.secretKeyRef, 'name');
      }
    }
    for (const volume of list(pod.volumes, 'volumes') as Record<string, any>[]) {
      fix('ConfigMap', volume.configMap, 'name');
      fix('Secret', volume.secret, 'secretName');
      for (const source of list(volume.projected?.sources, 'projected sources') as Record<string, any>[]) {
        fix('ConfigMap', source.configMap, 'name');
        fix('Secret', source.secret, 'name');
      }
    }
    for (const pull of list(pod.imagePullSecrets, 'imagePullSecrets') as Record<string, any>[]) fix('Secret', pull, 'name');
  }
}

function at(object: unknown, path: string[]): any {
  return path.reduce<any>((node, key) => (node === undefined || node === null ? undefined : node[key]), object);
}

/** The pod spec of a workload (or a Pod), where kustomize rewrites names and images. */
export function podSpecOf(object: KObject): Record<string, any> | undefined {
  if (object.kind === 'Pod') return object.spec as Record<string, any>;
  const template = POD_TEMPLATE_PATHS[object.kind];
  return template ? at(object, [...template, 'spec']) : undefined;
}

function applyPatch(acc: Accumulator, dir: string, entry: Record<string, unknown>, where: string): void {
  only(entry, ['patch', 'path'], `${where} patches`);
  const text = entry.patch !== undefined ? String(entry.patch) : readFileSync(resolve(dir, String(entry.path)), 'utf8');
  const docs = parseAllDocuments(text);
  if (docs.length !== 1) throw new KustomizeError(where, 'a patch of this builder is one document');
  const patch = docs[0].toJS() as Record<string, any>;
  if (patch.$patch !== 'delete') throw new KustomizeError(where, 'only `$patch: delete` patches are implemented by this builder');
  only(patch, ['$patch', 'apiVersion', 'kind', 'metadata'], `${where} patch`);
  only(patch.metadata ?? {}, ['name', 'namespace'], `${where} patch metadata`);
  const matches = acc.objects.filter(
    (o) =>
      o.apiVersion === patch.apiVersion &&
      o.kind === patch.kind &&
      o.metadata.name === patch.metadata?.name &&
      (patch.metadata?.namespace === undefined || o.metadata.namespace === patch.metadata.namespace),
  );
  if (matches.length !== 1) {
    throw new KustomizeError(where, `no unique target for patch ${patch.kind}/${patch.metadata?.name} (${matches.length} found)`);
  }
  acc.objects.splice(acc.objects.indexOf(matches[0]), 1);
}

function setNamespace(objects: KObject[], namespace: string, where: string): void {
  for (const object of objects) {
    if (NAMESPACE_SPECIAL.has(object.kind)) throw new KustomizeError(where, `namespace handling of ${object.kind} is not implemented`);
    if (!CLUSTER_SCOPED.has(object.kind)) object.metadata.namespace = namespace;
  }
}

function addLabels(objects: KObject[], entry: Record<string, unknown>, where: string): void {
  only(entry, ['pairs', 'includeSelectors', 'includeTemplates'], `${where} labels`);
  if (entry.includeSelectors === true) throw new KustomizeError(where, 'labels.includeSelectors is not implemented by this builder');
  const pairs = Object.fromEntries(Object.entries((entry.pairs ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
  const label = (metadata: Record<string, any>) => (metadata.labels = { ...(metadata.labels ?? {}), ...pairs });
  for (const object of objects) {
    label(object.metadata);
    if (entry.includeTemplates !== true) continue;
    const template = POD_TEMPLATE_PATHS[object.kind];
    if (!template) continue;
    const podTemplate = at(object, template);
    if (podTemplate) label((podTemplate.metadata ??= {}));
    if (object.kind === 'CronJob') {
      const jobTemplate = at(object, ['spec', 'jobTemplate']);
      if (jobTemplate) label((jobTemplate.metadata ??= {}));
    }
    if (object.kind === 'StatefulSet') {
      for (const claim of list(at(object, ['spec', 'volumeClaimTemplates']), 'volumeClaimTemplates') as Record<string, any>[]) {
        label((claim.metadata ??= {}));
      }
    }
  }
}

/** Splits `name[:tag][@digest]` (a registry port is part of the name). */
export function splitImage(image: string): { name: string; tag?: string; digest?: string } {
  const [rest, digest] = image.split('@') as [string, string | undefined];
  const colon = rest.lastIndexOf(':');
  const tagged = colon > rest.lastIndexOf('/');
  return { name: tagged ? rest.slice(0, colon) : rest, tag: tagged ? rest.slice(colon + 1) : undefined, digest };
}

function setImages(objects: KObject[], entry: Record<string, unknown>, where: string): void {
  only(entry, ['name', 'newName', 'newTag', 'digest'], `${where} images`);
  for (const object of objects) {
    const pod = podSpecOf(object);
    if (!pod) continue;
    for (const container of [...list(pod.containers, 'containers'), ...list(pod.initContainers, 'initContainers')] as Record<string, any>[]) {
      const image = splitImage(String(container.image));
      if (image.name !== entry.name) continue;
      const name = entry.newName !== undefined ? String(entry.newName) : image.name;
      if (entry.digest !== undefined) container.image = `${name}@${String(entry.digest)}`;
      else if (entry.newTag !== undefined) container.image = `${name}:${String(entry.newTag)}`;
      else container.image = `${name}${image.tag ? `:${image.tag}` : ''}${image.digest ? `@${image.digest}` : ''}`;
    }
  }
}

/**
 * A Secret's value as kustomize encodes it: base64, and from 70 characters on, in lines of 70 each ended by
 * a newline (the API server's decoder skips them; the name's hash covers them).
 */
function secretBase64(value: string): string {
  const encoded = Buffer.from(value).toString('base64');
  return encoded.length < 70 ? encoded : encoded.replace(/.{1,70}/g, '$&\n');
}
