/**
 * Where the CPU of a profiled run went, by owner: each `.cpuprofile` that `--cpu-prof` wrote (one per process
 * and per worker thread) reduced to self time per package (`node_modules/<pkg>`), per library or app of ours
 * (`libs/<name>`, `apps/<name>`), per Node internal module and per V8 bucket (garbage collector, program).
 * A flame graph shows one stack at a time; this table is the thing to compare between two runs.
 */

/** The part of V8's `.cpuprofile` format we read. */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  samples: number[];
  timeDeltas: number[];
}

/** Who owns a function, from the script it is in. */
export function ownerOf(functionName: string, url: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scope, name] = url.slice(modules + '/node_modules/'.length).split('/');
    return scope.startsWith('@') ? `${scope}/${name}` : scope;
  }
  const ours = /\/(libs|apps)\/([^/]+)\//.exec(url);
  if (ours) return `${ours[1]}/${ours[2]}`;
  return /\/(bench|test)\//.exec(url)?.[1] ?? '(other)';
}

/** Self time in ms per owner, idle time left out. */
export function selfTimeByOwner(profile: CpuProfile): Map<string, number> {
  const owners = new Map<number, string>();
  for (const node of profile.nodes) owners.set(node.id, ownerOf(node.callFrame.functionName, node.callFrame.url));
  const ms = new Map<string, number>();
  // timeDeltas[i + 1] is the time from sample i to the next one: the time sample i stands for.
  for (let i = 0; i < profile.samples.length; i++) {
    const owner = owners.get(profile.samples[i]) ?? '(unknown)';
    if (owner === '(idle)') continue;
    ms.set(owner, (ms.get(owner) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000);
  }
  return ms;
}

/** A Markdown table of the owners above `minShare` of `total`, biggest first, per page when `pages` is given. */
export function ownerTable(ms: Map<string, number>, pages: number | undefined, minShare = 0.01): string {
  const total = [...ms.values()].reduce((a, b) => a + b, 0);
  const rows = [...ms].sort((a, b) => b[1] - a[1]).filter(([, v]) => v >= total * minShare);
  const perPage = (v: number) => (pages ? ` ${(v / pages).toFixed(3)} |` : '');
  const head = `| owner | ms | share |${pages ? ' ms per page |' : ''}\n|---|---|---|${pages ? '---|' : ''}`;
  const body = rows.map(([owner, v]) => `| ${owner} | ${v.toFixed(0)} | ${((100 * v) / total).toFixed(1)} % |${perPage(v)}`);
  return [head, ...body, `| **all (busy)** | ${total.toFixed(0)} | 100 % |${perPage(total)}`].join('\n');
}
