import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as ts from 'typescript';
import type { KObject } from './kustomize';

/**
 * Validation of Kubernetes objects against the API's OpenAPI schemas, offline, with kubernetes-models:
 * its per-kind validators are compiled from the Kubernetes OpenAPI spec (types, required fields, enums,
 * formats, int-or-string), and its TypeScript interfaces are generated from the same spec. The runtime
 * validators accept unknown fields, so every object is also type-checked against its kind's interface as
 * an object literal: TypeScript's excess-property check then rejects any field the API does not define
 * (what `kubectl apply --validate=strict` does against a cluster).
 */
export const KUBERNETES_VERSION = 'v1.33.0'; // the schema version of kubernetes-models 4.5.x (its CHANGELOG)

/** CRD groups and the kubernetes-models package that holds their models. */
const CRD_PACKAGES: Record<string, string> = { 'keda.sh': '@kubernetes-models/keda' };

/** The module of a kind's model, e.g. kubernetes-models/apps/v1/Deployment. */
export function modelModule(apiVersion: string, kind: string): string {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (!group) return `kubernetes-models/${version}/${kind}`;
  const crdPackage = CRD_PACKAGES[group];
  return crdPackage ? `${crdPackage}/${group}/${version}/${kind}` : `kubernetes-models/${group}/${version}/${kind}`;
}

const label = (o: KObject) => `${o.apiVersion} ${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

/** Runs each object through its kind's compiled OpenAPI validator; the problems, one line each. */
export function schemaProblems(objects: KObject[]): string[] {
  const problems: string[] = [];
  for (const object of objects) {
    let Model: new (data: unknown) => { validate(): void };
    try {
      Model = require(modelModule(object.apiVersion, object.kind))[object.kind];
    } catch {
      problems.push(`${label(object)}: no schema for this apiVersion and kind in Kubernetes ${KUBERNETES_VERSION}`);
      continue;
    }
    try {
      new Model(asDecoded(object)).validate();
    } catch (error) {
      problems.push(`${label(object)}: ${(error as Error).message}`);
    }
  }
  return problems;
}

/**
 * A copy of the object as the API server reads it: a Secret's base64 values without their line breaks
 * (kustomize writes a long value in lines of 70; the server's decoder skips them, the schema's "byte"
 * format does not).
 */
function asDecoded(object: KObject): KObject {
  const copy = JSON.parse(JSON.stringify(object));
  if (object.kind === 'Secret' && copy.data) for (const key of Object.keys(copy.data)) copy.data[key] = String(copy.data[key]).replace(/\n/g, '');
  return copy;
}

/**
 * Type-checks each object as an object literal of its kind's interface (I<Kind> of its model module); the
 * compiler's complaints (unknown fields, wrong types, missing required fields), one line each.
 */
export function strictTypeProblems(objects: KObject[]): string[] {
  // A file that exists only in memory, placed in this folder so that imports resolve from the checkout.
  const fileName = join(__dirname, '__manifests__.ts').replace(/\\/g, '/');
  const parts: string[] = [];
  const spans: { start: number; end: number; object: KObject }[] = [];
  const imports = new Map<string, string>();
  objects.forEach((object, i) => {
    const module = modelModule(object.apiVersion, object.kind);
    if (!imports.has(module)) imports.set(module, `T${imports.size}`);
    const start = parts.join('').length;
    parts.push(`export const o${i}: ${imports.get(module)}.I${object.kind} = ${JSON.stringify(object, null, 2)};\n`);
    spans.push({ start, end: parts.join('').length, object });
  });
  const header = [...imports].map(([module, alias]) => `import type * as ${alias} from ${JSON.stringify(module)};\n`).join('');
  const source = header + parts.join('');

  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    lib: ['lib.es2022.d.ts'],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => f === fileName || fileExists.call(host, f);
  host.readFile = (f) => (f === fileName ? source : readFile.call(host, f));
  host.getSourceFile = (f, language, onError) => (f === fileName ? ts.createSourceFile(f, source, language) : getSourceFile.call(host, f, language, onError));
  const program = ts.createProgram([fileName], options, host);
  const diagnostics = [...program.getSyntacticDiagnostics(), ...program.getSemanticDiagnostics()].filter((d) => d.file?.fileName === fileName || !d.file);
  return diagnostics.map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
    if (d.start === undefined) return message;
    const at = d.start - header.length;
    const span = spans.find((s) => at >= s.start && at < s.end);
    const { line } = ts.getLineAndCharacterOfPosition(d.file!, d.start);
    const text = source.split('\n')[line].trim();
    return `${span ? label(span.object) : 'imports'}: ${message} (at ${text})`;
  });
}

/** The installed version of a package whose exports hide its package.json. */
export function packageVersion(name: string): string {
  let dir = dirname(require.resolve(name));
  while (!dir.endsWith(`node_modules/${name}`)) dir = dirname(dir);
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
}
