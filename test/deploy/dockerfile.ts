import { readFileSync } from 'node:fs';
import { DockerfileParser, Instruction, JSONInstruction, ModifiableInstruction } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';

/** A Dockerfile as the tests need it: its stages and their instructions, parsed by dockerfile-ast. */

export interface DockerInstruction {
  keyword: string;
  line: number;
  /** --name=value flags (--name without a value: ''). */
  flags: Record<string, string>;
  /** The arguments after the flags, as written (shell form) … */
  args: string[];
  /** … or the exec form's strings, when the arguments are a JSON array. */
  exec?: string[];
}

export interface DockerStage {
  name?: string;
  /** The base image, build ARGs substituted with their defaults. */
  from: string;
  /** The earlier stage this one is built on (`FROM <stage name>`): it inherits its files and settings. */
  parent?: DockerStage;
  /** Its own instructions (imageInstructions adds the inherited ones). */
  instructions: DockerInstruction[];
}

export interface ParsedDockerfile {
  stages: DockerStage[];
  /** dockerfile-utils' diagnostics (syntax, unknown instructions or flags, malformed JSON …). */
  problems: string[];
}

function execForm(text: string | null): string[] | undefined {
  if (!text?.trim().startsWith('[')) return undefined;
  const value = JSON.parse(text) as unknown;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new Error(`not an exec form: ${text}`);
  return value;
}

export function parseDockerfile(file: string): ParsedDockerfile {
  const content = readFileSync(file, 'utf8');
  const dockerfile = DockerfileParser.parse(content);
  const argDefaults = new Map<string, string>();
  for (const arg of dockerfile.getInitialARGs()) {
    const property = arg.getProperty();
    if (property?.getName()) argDefaults.set(property.getName(), property.getValue() ?? '');
  }
  const substitute = (text: string) => text.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (m, name: string) => argDefaults.get(name) ?? m);

  const stages: DockerStage[] = [];
  for (const instruction of dockerfile.getInstructions() as Instruction[]) {
    const keyword = instruction.getKeyword().toUpperCase();
    const flags: Record<string, string> = {};
    if (instruction instanceof ModifiableInstruction) {
      for (const flag of instruction.getFlags()) flags[flag.getName()] = flag.getValue() ?? '';
    }
    const args = instruction.getArguments().map((a) => a.getValue());
    let exec: string[] | undefined;
    if (instruction instanceof JSONInstruction) exec = execForm(instruction.getArgumentsContent()?.replace(/^(--\S+\s+)*/, '') ?? null);
    if (keyword === 'HEALTHCHECK' && args[0]?.toUpperCase() === 'CMD') {
      const content = instruction.getArgumentsContent() ?? '';
      exec = execForm(content.slice(content.search(/\bCMD\b/i) + 3));
    }
    const parsed: DockerInstruction = { keyword, line: instruction.getRange().start.line + 1, flags, args, exec };
    if (keyword === 'FROM') {
      const asIndex = args.findIndex((a) => a.toUpperCase() === 'AS');
      const from = substitute(args[0]);
      const parent = stages.find((s) => s.name?.toLowerCase() === from.toLowerCase());
      stages.push({ from, parent, name: asIndex > 0 ? args[asIndex + 1] : undefined, instructions: [] });
    } else if (stages.length) {
      stages[stages.length - 1].instructions.push(parsed);
    } else if (keyword !== 'ARG') {
      throw new Error(`${file}:${parsed.line}: ${keyword} before the first FROM`);
    }
  }
  const problems = validate(content).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
  return { stages, problems };
}

/** A stage by its name, or by its index as `COPY --from=<n>` may name it. */
export function stageNamed(stages: DockerStage[], name: string): DockerStage | undefined {
  return stages.find((s) => s.name?.toLowerCase() === name.toLowerCase()) ?? stages[Number(name)];
}

/** The instructions that make up a stage's image: those of the stages it is built on, then its own. */
export function imageInstructions(stage: DockerStage): DockerInstruction[] {
  return [...(stage.parent ? imageInstructions(stage.parent) : []), ...stage.instructions];
}

/** The environment a stage's image sets: its ENV name=value, those of the stages it is built on first. */
export function imageEnv(stage: DockerStage): Record<string, string> {
  return Object.fromEntries(
    imageInstructions(stage)
      .filter((i) => i.keyword === 'ENV')
      .flatMap((e) => e.args.map((a) => a.split('=') as [string, string])),
  );
}

/**
 * The stages `docker build --target` builds for a stage (as BuildKit does): the stage, the stages it is
 * built on and those it copies from (`COPY --from`), and theirs. Any other stage is skipped.
 */
export function stagesBuiltFor(stages: DockerStage[], target: DockerStage): Set<DockerStage> {
  const needed = new Set<DockerStage>();
  const visit = (stage: DockerStage) => {
    if (needed.has(stage)) return;
    needed.add(stage);
    if (stage.parent) visit(stage.parent);
    for (const copy of stage.instructions.filter((i) => i.keyword === 'COPY' && i.flags.from !== undefined)) {
      const source = stageNamed(stages, copy.flags.from);
      if (source) visit(source);
    }
  };
  visit(target);
  return needed;
}

/**
 * .dockerignore as Docker applies it (moby/patternmatcher): `#` comments, `!` exceptions, the last matching
 * pattern wins, and a pattern that matches a parent directory matches everything in it. `*` and `?` stay
 * within a path segment, `**` spans any number of segments.
 */
export class DockerIgnore {
  private readonly rules: { exclude: boolean; regex: RegExp; pattern: string }[];

  constructor(text: string) {
    this.rules = text
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => {
        const exclude = !line.startsWith('!');
        const pattern = clean(exclude ? line : line.slice(1).trim());
        return { exclude, regex: toRegex(pattern), pattern };
      });
  }

  /** Whether the build context leaves `path` (relative to the context root, with /) out. */
  ignores(path: string): boolean {
    const parts = clean(path).split('/');
    const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of this.rules) {
      if (candidates.some((c) => rule.regex.test(c))) excluded = rule.exclude;
    }
    return excluded;
  }
}

function clean(pattern: string): string {
  const parts: string[] = [];
  for (const part of pattern.replace(/\\/g, '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return parts.join('/');
}

function toRegex(pattern: string): RegExp {
  let regex = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        i++;
        if (pattern[i + 1] === '/') {
          i++;
          regex += '(?:.*/)?';
        } else {
          regex += '.*';
        }
      } else {
        regex += '[^/]*';
      }
    } else if (c === '?') {
      regex += '[^/]';
    } else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) throw new Error(`.dockerignore: unterminated [ in ${pattern}`);
      regex += `[${pattern
        .slice(i + 1, end)
        .replace(/^!/, '^')
        .replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (c === '\\') {
      regex += `\\${pattern[++i] ?? '\\'}`;
    } else {
      regex += c.replace(/[.+^${}()|]/g, '\\$&');
    }
  }
  return new RegExp(`^${regex}$`);
}
