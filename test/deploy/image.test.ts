import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { chmodSync, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, dirname, join, posix } from 'node:path';
import * as ts from 'typescript';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { APPS, ENTRYPOINT, mainOf, readableEnvNames, rel, ROOT, runEntrypoint, SERVICES } from './deploy-support';
import { DockerIgnore, DockerInstruction, DockerStage, imageEnv, imageInstructions, parseDockerfile, stageNamed as namedIn, stagesBuiltFor } from './dockerfile';
import { kustomizeBuild, podSpecOf } from './kustomize';

/**
 * The Dockerfile, .dockerignore and the image's scripts, checked without a Docker engine: the Dockerfile
 * parses cleanly (dockerfile-utils), is multi-stage, runs as a non-root user with a HEALTHCHECK; the build
 * context holds everything the TypeScript build imports; the entrypoint starts every program by name; and
 * the image itself, built by replaying each stage's instructions (the build context through .dockerignore,
 * `npm run build` run for real, the production dependencies only), starts a service whose /health,
 * /metrics and HEALTHCHECK answer and which drains on SIGTERM. The render stage is that image plus Chromium,
 * and not the default target; replayed with this machine's Debian packages, it holds the Chromium its
 * PLUGIN_RENDER_CHROMIUM_PATH names, and plugin-render starts from it.
 */

const dockerfile = parseDockerfile(join(ROOT, 'Dockerfile'));
const { stages } = dockerfile;
/** The image `docker build` makes without --target: the last stage. */
const final = stages[stages.length - 1];
const ignore = new DockerIgnore(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));
/** A stage's instructions of one kind, those it inherits from the stages it is built on included. */
const of = (stage: DockerStage, keyword: string) => imageInstructions(stage).filter((i) => i.keyword === keyword);
const lastOf = (stage: DockerStage, keyword: string): DockerInstruction | undefined => of(stage, keyword).pop();
const stageNamed = (name: string) => namedIn(stages, name)!;
/** The image plugin-render runs on (`--target render`). */
const render = stageNamed('render');

/** Where an instruction's relative path lands: the stage's WORKDIR at that point (or, without one, at its end). */
function workdirAt(stage: DockerStage, instruction?: DockerInstruction): string {
  let dir = '/';
  for (const i of imageInstructions(stage)) {
    if (i === instruction) break;
    if (i.keyword === 'WORKDIR') dir = posix.resolve(dir, i.args[0]);
  }
  return dir;
}

/** The COPY instructions that take files from the build context (no --from). */
const contextCopies = stages.flatMap((stage) =>
  of(stage, 'COPY')
    .filter((c) => c.flags.from === undefined)
    .map((copy) => ({ stage, copy })),
);

describe('Dockerfile', () => {
  it('parses without a problem (dockerfile-utils)', () => {
    expect(dockerfile.problems).toEqual([]);
  });

  it('is multi-stage: the final stage takes its build output and dependencies from earlier stages', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const fromStages = of(final, 'COPY')
      .map((c) => c.flags.from)
      .filter(Boolean);
    expect(fromStages.length).toBeGreaterThan(0);
    for (const name of fromStages) expect(stageNamed(name!)).toBeDefined();
    // The final stage installs and builds nothing itself.
    expect(
      of(final, 'RUN')
        .map((r) => r.args.join(' '))
        .filter((cmd) => /\bnpm\b|\btsc\b/.test(cmd)),
    ).toEqual([]);
  });

  it('builds with `npm run build` and ships only production dependencies', () => {
    const runs = stages.flatMap((s) => of(s, 'RUN').map((r) => r.args.join(' ')));
    expect(runs.some((cmd) => /\bnpm run build\b/.test(cmd))).toBe(true);
    const modulesCopy = of(final, 'COPY').find((c) => c.args.slice(0, -1).some((a) => a.endsWith('node_modules')))!;
    const depsStage = stageNamed(modulesCopy.flags.from!);
    expect(of(depsStage, 'RUN').some((r) => /\bnpm ci\b.*--omit=dev/.test(r.args.join(' ')))).toBe(true);
  });

  it('pins its base images to a tag (a stage built on an earlier stage has that one’s base)', () => {
    for (const stage of stages.filter((s) => !s.parent)) expect(stage.from).toMatch(/^[\w./-]+:(?!latest$)[\w.-]+$/);
  });

  it('runs the final stage and the render stage as a non-root user, the same one', () => {
    for (const stage of [final, render]) {
      const user = lastOf(stage, 'USER');
      expect(user).toBeDefined();
      const [name] = user!.args[0].split(':');
      expect(['root', '0']).not.toContain(name);
      // Numeric, so that Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
      expect(name).toMatch(/^[1-9]\d*$/);
      const instructions = imageInstructions(stage);
      expect(instructions.indexOf(user!)).toBeGreaterThan(Math.max(...of(stage, 'RUN').map((r) => instructions.indexOf(r))));
    }
    expect(lastOf(render, 'USER')!.args).toEqual(lastOf(final, 'USER')!.args);
  });

  it('has a HEALTHCHECK running the health script of the image', () => {
    const healthcheck = lastOf(final, 'HEALTHCHECK');
    expect(healthcheck?.exec).toBeDefined();
    const [program, script] = healthcheck!.exec!;
    expect(program).toBe('bash');
    expect(imageFileSource(script)).toBe(join(ROOT, 'scripts/docker-healthcheck.sh'));
  });

  it('starts programs through the entrypoint script, which the image holds', () => {
    const entrypoint = lastOf(final, 'ENTRYPOINT');
    expect(entrypoint?.exec).toHaveLength(1);
    expect(imageFileSource(entrypoint!.exec![0])).toBe(ENTRYPOINT);
    const cmd = lastOf(final, 'CMD');
    expect(cmd?.exec).toEqual([]); // no default program: `docker run crawler <name>` or SERVICE=<name>
  });

  it('sets only environment variables the programs read (or Node’s own NODE_ENV)', () => {
    const known = readableEnvNames();
    for (const stage of [final, render]) expect(Object.keys(imageEnv(stage)).filter((n) => n !== 'NODE_ENV' && !known.has(n))).toEqual([]);
  });
});

describe('the render stage (`docker build --target render`: the image plus Chromium, for plugin-render)', () => {
  it('is the final image plus Chromium: built on the stage the default target is, running the same programs the same way', () => {
    expect(render).toBeDefined();
    expect(render.parent).toBeDefined();
    expect(render.parent).toBe(final.parent ?? final);
    for (const keyword of ['ENTRYPOINT', 'CMD', 'HEALTHCHECK', 'EXPOSE', 'WORKDIR']) expect(lastOf(render, keyword)).toEqual(lastOf(final, keyword));
    expect(imageEnv(render)).toEqual({ ...imageEnv(final), PLUGIN_RENDER_CHROMIUM_PATH: expect.any(String) });
  });

  it('installs Chromium as root, without recommended packages, and leaves no package lists behind', () => {
    const [install] = render.instructions.filter((i) => i.keyword === 'RUN');
    const command = install.args.join(' ');
    expect(command).toMatch(/\bapt-get install -y --no-install-recommends\b.*\bchromium\b/);
    expect(command).toMatch(/\brm -rf \/var\/lib\/apt\/lists\/\*$/);
    const users = render.instructions.filter((i) => i.keyword === 'USER' && render.instructions.indexOf(i) < render.instructions.indexOf(install));
    expect(users.pop()?.args).toEqual(['root']);
  });

  it('is not the default: `docker build` without --target builds the last stage, which needs neither render nor Chromium', () => {
    expect(final).not.toBe(render);
    expect(final.name).toBe('default');
    const built = stagesBuiltFor(stages, final);
    expect(built.has(render)).toBe(false);
    expect([...built].flatMap(installedPackages)).toEqual([]);
    expect(imageEnv(final).PLUGIN_RENDER_CHROMIUM_PATH).toBeUndefined();
    // The Dockerfile's header tells how to build each of the two.
    expect(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).toMatch(/docker build --target render -t crawler-render \./);
  });
});

/** The checkout file that ends up at `imagePath` in the final image (via a COPY from the build context). */
function imageFileSource(imagePath: string): string | undefined {
  for (const copy of of(final, 'COPY').filter((c) => c.flags.from === undefined)) {
    const sources = copy.args.slice(0, -1);
    const dest = posix.resolve(workdirAt(final, copy), copy.args[copy.args.length - 1]);
    for (const source of sources) {
      const target = copy.args[copy.args.length - 1].endsWith('/') || sources.length > 1 ? posix.join(dest, posix.basename(source)) : dest;
      if (target === imagePath) return join(ROOT, source);
    }
  }
  return undefined;
}

describe('.dockerignore and the build context', () => {
  it('keeps every file the Dockerfile copies from the context', () => {
    for (const { copy } of contextCopies) {
      for (const source of copy.args.slice(0, -1)) {
        expect({ source, exists: existsSync(join(ROOT, source)), ignored: ignore.ignores(source) }).toEqual({ source, exists: true, ignored: false });
      }
    }
  });

  it('leaves out what the image never needs (dependencies, build output, VCS, tests, docs, deployments)', () => {
    for (const path of [
      'node_modules/bullmq/package.json',
      'dist/apps/frontier/src/main.js',
      '.git/HEAD',
      'test/web/serve.ts',
      'docs/architecture.md',
      'k8s/kustomization.yaml',
      'crawl-data/summary.json',
      'libs/url/src/canonicalize.spec.ts',
    ]) {
      expect({ path, ignored: ignore.ignores(path) }).toEqual({ path, ignored: true });
    }
  });

  it('holds every source the TypeScript build of apps/ imports, and the runtime needs only production dependencies', () => {
    const config = ts.readConfigFile(join(ROOT, 'tsconfig.build.json'), ts.sys.readFile);
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const copied = contextCopies.flatMap(({ copy }) => copy.args.slice(0, -1));
    for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']) expect(copied).toContain(file);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const queue = APPS.flatMap((app) =>
      readdirSync(join(ROOT, 'apps', app, 'src'), { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.ts') && !/\.(spec|test)\.ts$/.test(f))
        .map((f) => join(ROOT, 'apps', app, 'src', f)),
    );
    const seen = new Set<string>();
    const problems: string[] = [];
    const packages = new Set<string>();
    while (queue.length) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const path = rel(file);
      if (ignore.ignores(path)) problems.push(`${path} is left out of the build context by .dockerignore`);
      if (!copied.some((source) => path === source || path.startsWith(`${source.replace(/\/$/, '')}/`))) problems.push(`${path} is not copied into the build stage`);
      for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
        if (fileName.startsWith('node:') || builtinModules.includes(fileName)) continue;
        const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule;
        if (!resolved) problems.push(`${path}: cannot resolve ${fileName}`);
        else if (resolved.isExternalLibraryImport || resolved.resolvedFileName.includes('/node_modules/'))
          packages.add(fileName.startsWith('@') ? fileName.split('/').slice(0, 2).join('/') : fileName.split('/')[0]);
        else queue.push(resolved.resolvedFileName);
      }
    }
    expect(problems).toEqual([]);
    expect([...packages].filter((name) => !pkg.dependencies[name])).toEqual([]);
    expect(seen.size).toBeGreaterThan(50);
  });
});

describe('the entrypoint script', () => {
  afterAll(removeTempDirs);

  it('starts every app under apps/ by name, several services together (services), and every command of the cluster CLI', () => {
    const dir = tempDir('entrypoint-');
    for (const app of APPS) expect(runEntrypoint(dir, [app]).node).toEqual([mainOf(app)]);
    const together = join(ROOT, 'dist/apps/crawl/src/services-main.js');
    expect(runEntrypoint(dir, ['services'], { SERVICES: 'url-filter,url-seen' }).node).toEqual([together]);
    expect(existsSync(together)).toBe(true);
    const cliCommands = [...readFileSync(join(ROOT, 'apps/crawl/src/cluster-cli.ts'), 'utf8').matchAll(/\.command\('([a-z-]+)'\)/g)].map((m) => m[1]);
    expect(cliCommands).toEqual(expect.arrayContaining(['seed', 'status']));
    for (const command of cliCommands) {
      expect(runEntrypoint(dir, [command, '--control', 'http://control-plane:3000']).node).toEqual([
        join(ROOT, 'dist/apps/crawl/src/cluster-cli.js'),
        command,
        '--control',
        'http://control-plane:3000',
      ]);
    }
    for (const app of APPS) expect(existsSync(mainOf(app))).toBe(true);
  });

  it('takes the program from SERVICE when no name is given, and passes the arguments on', () => {
    const dir = tempDir('entrypoint-');
    expect(runEntrypoint(dir, [], { SERVICE: 'downloader' }).node).toEqual([mainOf('downloader')]);
    expect(runEntrypoint(dir, ['https://example.com/', '--max-pages', '2'], { SERVICE: 'crawl' }).node).toEqual([
      mainOf('crawl'),
      'https://example.com/',
      '--max-pages',
      '2',
    ]);
    // A name given on the command line wins over SERVICE.
    expect(runEntrypoint(dir, ['frontier'], { SERVICE: 'downloader' }).node).toEqual([mainOf('frontier')]);
  });

  it('refuses an unknown program, or none, with a usage message (exit 64)', () => {
    const dir = tempDir('entrypoint-');
    for (const [args, env] of [
      [['fronteir'], {}],
      [[], {}],
      [[], { SERVICE: 'nope' }],
    ] as [string[], Record<string, string>][]) {
      const run = runEntrypoint(dir, args, env);
      expect(run.status).toBe(64);
      expect(run.node).toBeUndefined();
      expect(run.stderr).toMatch(/usage: .*\n.*frontier dns-resolver downloader/);
    }
  });

  it('names the missing build output instead of failing obscurely (exit 70)', () => {
    const dir = tempDir('entrypoint-');
    mkdirSync(join(dir, 'app/scripts'), { recursive: true });
    copyFileSync(ENTRYPOINT, join(dir, 'app/scripts/docker-entrypoint.sh'));
    const run = runEntrypoint(dir, ['frontier'], {}, join(dir, 'app/scripts/docker-entrypoint.sh'));
    expect(run.status).toBe(70);
    expect(run.stderr).toContain('dist/apps/frontier/src/main.js is missing');
  });

  it('lists in its usage exactly the services of the service map (plugins by their rule, plugin-<name>)', () => {
    const script = readFileSync(ENTRYPOINT, 'utf8');
    const usage = /services: (.*)/.exec(script)![1].trim().split(/\s+/);
    expect(usage.sort()).toEqual(SERVICES.filter((s) => !s.startsWith('plugin-')).sort());
    expect(script).toMatch(/plugins: +plugin-<name>/);
  });

  it('starts any plugin that was built by its app name, and refuses one that was not (exit 64)', () => {
    const dir = tempDir('entrypoint-');
    for (const app of SERVICES.filter((s) => s.startsWith('plugin-'))) expect(runEntrypoint(dir, [app]).node).toEqual([mainOf(app)]);
    for (const name of ['plugin-nope', 'plugin-', 'plugin-../crawl']) {
      const run = runEntrypoint(dir, [name]);
      expect({ name, status: run.status, node: run.node }).toEqual({ name, status: 64, node: undefined });
    }
  });
});

/** The production dependencies as `npm ci --omit=dev` installs them: the lockfile's non-dev top-level packages. */
function linkProductionModules(target: string): void {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  for (const [key, entry] of Object.entries<any>(lock.packages)) {
    const name = /^node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(key)?.[1];
    if (!name || entry.dev || entry.devOptional || entry.link) continue;
    const source = join(ROOT, 'node_modules', name);
    if (!existsSync(source)) continue; // an optional package for another platform
    mkdirSync(dirname(join(target, name)), { recursive: true });
    symlinkSync(source, join(target, name), 'dir');
  }
}

/** Copies a path of the build context, leaving out what .dockerignore excludes (as Docker sends the context). */
function copyFromContext(source: string, target: string): void {
  const path = posix.normalize(source).replace(/\/$/, '');
  if (ignore.ignores(path)) return;
  if (!statSync(join(ROOT, path)).isDirectory()) {
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(ROOT, path), target);
    return;
  }
  for (const entry of readdirSync(join(ROOT, path))) copyFromContext(`${path}/${entry}`, join(target, entry));
}

/** The Debian release of an image (`node:20-bookworm-slim` → bookworm), or of this machine. */
const debianOf = (image: string) => /\b(bookworm|trixie|bullseye|buster)\b/.exec(image)?.[1];
const hostDebian = () => (existsSync('/etc/os-release') ? /^VERSION_CODENAME=(\w+)/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] : undefined);

/** The files this machine's dpkg lists for an installed package, if it has it. */
function hostPackageFiles(name: string): string[] | undefined {
  const list = spawnSync('dpkg-query', ['-L', name], { encoding: 'utf8' });
  return list.status === 0 ? list.stdout.split('\n').filter((f) => f.startsWith('/')) : undefined;
}

/** The packages an `apt-get install` command names. */
const aptPackages = (command: string) =>
  command
    .split(/\s+/)
    .slice(2)
    .filter((a) => !a.startsWith('-'));

/** The commands of a stage's RUN instructions, inherited ones included, split at `&&`. */
const commandsOf = (stage: DockerStage) =>
  of(stage, 'RUN').flatMap((r) =>
    r.args
      .join(' ')
      .split('&&')
      .map((c) => c.trim()),
  );

/** The packages a stage installs with `apt-get install`. */
const installedPackages = (stage: DockerStage) =>
  commandsOf(stage)
    .filter((c) => /^apt-get install\b/.test(c))
    .flatMap(aptPackages);

/**
 * Whether this machine can replay a stage's `apt-get install`: it runs the Debian release of the stage's base
 * image and has every package installed (the tests' machines are Debian with Chromium, like the image).
 */
function aptReplayable(stage: DockerStage): boolean {
  let base = stage;
  while (base.parent) base = base.parent;
  return debianOf(base.from) === hostDebian() && installedPackages(stage).every((p) => hostPackageFiles(p) !== undefined);
}

/**
 * Replays the instructions of a stage into `root` (the stage's file system), without Docker: WORKDIR, COPY
 * from the context (through .dockerignore) or from an earlier stage, and the few RUN commands the
 * Dockerfile uses: `npm ci` (the checkout's node_modules linked in; with --omit=dev, its production
 * packages only), `npm run build` (run for real), `mkdir -p`, `chown` (a no-op here), `apt-get install`
 * (each package's files linked from this machine, which must have them: aptReplayable), `apt-get update`
 * and the removal of the package lists (no-ops). Anything else throws, so the replay never silently differs
 * from the Dockerfile. A stage built on an earlier one starts from a copy of that one's files.
 */
function replayStage(stage: DockerStage, root: string, built: Map<DockerStage, string>): void {
  const at = (path: string) => join(root, path);
  for (const instruction of stage.instructions) {
    const here = workdirAt(stage, instruction);
    switch (instruction.keyword) {
      case 'WORKDIR':
        mkdirSync(at(posix.resolve(here, instruction.args[0])), { recursive: true });
        break;
      case 'COPY': {
        const sources = instruction.args.slice(0, -1);
        const destArg = instruction.args[instruction.args.length - 1];
        const dest = posix.resolve(here, destArg);
        for (const source of sources) {
          const target = at(destArg.endsWith('/') || sources.length > 1 ? posix.join(dest, posix.basename(source)) : dest);
          const from = instruction.flags.from;
          if (from === undefined) copyFromContext(source, target);
          else cpSync(join(built.get(stageNamed(from))!, posix.resolve(here, source)), target, { recursive: true });
          if (instruction.flags.chmod) chmodSync(target, parseInt(instruction.flags.chmod, 8));
        }
        break;
      }
      case 'RUN':
        for (const command of instruction.args
          .join(' ')
          .split('&&')
          // An environment assignment before a command (NODE_EXTRA_CA_CERTS for npm behind a TLS proxy) changes
          // only where npm may download from, which the replay never does.
          .map((c) => c.trim().replace(/^(?:[A-Z_]+=\S+\s+)+/, ''))) {
          if (/^npm ci\b/.test(command)) {
            mkdirSync(at(here), { recursive: true });
            if (/--omit=dev/.test(command)) {
              mkdirSync(at(posix.join(here, 'node_modules')));
              linkProductionModules(at(posix.join(here, 'node_modules')));
            } else {
              symlinkSync(join(ROOT, 'node_modules'), at(posix.join(here, 'node_modules')), 'dir');
            }
          } else if (command === 'npm run build') {
            const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: at(here), encoding: 'utf8' });
            if (build.status !== 0) throw new Error(`npm run build failed in the replayed build stage:\n${build.stdout}${build.stderr}`);
          } else if (/^mkdir -p /.test(command)) {
            for (const dir of command.split(/\s+/).slice(2)) mkdirSync(at(posix.resolve(here, dir)), { recursive: true });
          } else if (/^apt-get install /.test(command)) {
            for (const name of aptPackages(command)) {
              const files = hostPackageFiles(name);
              if (!files) throw new Error(`cannot replay RUN ${command} (line ${instruction.line}): this machine has no package ${name}`);
              for (const file of files.filter((f) => lstatSync(f, { throwIfNoEntry: false })?.isDirectory() === false)) {
                mkdirSync(dirname(at(file)), { recursive: true });
                if (!existsSync(at(file))) symlinkSync(file, at(file));
              }
            }
          } else if (!/^chown |^npm cache clean\b|^apt-get update$|^rm -rf \/var\/lib\/apt\/lists\/\*$/.test(command)) {
            throw new Error(`cannot replay RUN ${command} (line ${instruction.line}) without Docker`);
          }
        }
        break;
      case 'ENV':
      case 'ARG':
      case 'USER':
      case 'EXPOSE':
      case 'HEALTHCHECK':
      case 'ENTRYPOINT':
      case 'CMD':
      case 'LABEL':
      case 'STOPSIGNAL':
        break; // metadata: nothing to lay out
      default:
        throw new Error(`cannot replay ${instruction.keyword} (line ${instruction.line}) without Docker`);
    }
  }
}

/**
 * The image of a target, replayed into `dir`: the stages it needs (stagesBuiltFor), in order, each into its
 * own folder, and the target's folder returned. `built` keeps the stages replayed so far, for the next target.
 */
function buildImage(dir: string, target: DockerStage, built: Map<DockerStage, string>): string {
  const needed = stagesBuiltFor(stages, target);
  stages.forEach((stage, i) => {
    if (!needed.has(stage) || built.has(stage)) return;
    const root = join(dir, `stage-${i}-${stage.name ?? 'unnamed'}`);
    if (stage.parent) cpSync(built.get(stage.parent)!, root, { recursive: true, verbatimSymlinks: true });
    else mkdirSync(root);
    replayStage(stage, root, built);
    built.set(stage, root);
  });
  return built.get(target)!;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The stages replayed so far, shared by the images below (the render image is built on the final one's stages). */
const replayed = new Map<DockerStage, string>();
let replayDir: string | undefined;
const replayImage = (target: DockerStage) => buildImage((replayDir ??= tempDir('image-')), target, replayed);
afterAll(removeTempDirs);

/**
 * Starts a program through the entrypoint of a replayed image, in its working directory, with only what the
 * image and `env` set (no REDIS_URL or S3_URL from the test's shell: in-memory drivers); resolves its port once
 * it logs that it is ready.
 */
async function startFromImage(root: string, stage: DockerStage, program: string, env: Record<string, string>): Promise<{ service: ChildProcess; port: number }> {
  const entrypoint = lastOf(stage, 'ENTRYPOINT')!.exec![0];
  const service = spawn('sh', [join(root, entrypoint), program], {
    cwd: join(root, workdirAt(stage)),
    env: {
      ...imageEnv(stage),
      PATH: `${dirname(process.execPath)}${delimiter}/usr/bin${delimiter}/bin`,
      PORT: '0',
      // Resolve packages where they are linked, so that only the production dependencies are found.
      NODE_OPTIONS: '--preserve-symlinks',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${program} did not start from the image layout:\n${output.join('')}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      const ready = new RegExp(`\\{[^\\n]*"msg":"${program} ready"[^\\n]*\\}`).exec(output.join(''));
      if (ready) {
        clearTimeout(timer);
        resolve(JSON.parse(ready[0]).port);
      }
    };
    service.stdout!.on('data', onData);
    service.stderr!.on('data', onData);
    service.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${program} exited with ${code} from the image layout:\n${output.join('')}`));
    });
  });
  service.removeAllListeners('exit'); // the start-up watcher
  return { service, port };
}

/** SIGTERM (what `docker stop` and Kubernetes send), and the exit code. */
function stop(service: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => service.once('exit', (code) => resolve(code)));
  service.kill('SIGTERM');
  return exited;
}

describe('the image, built by replaying the Dockerfile’s stages without Docker', () => {
  let root: string;
  let service: ChildProcess | undefined;
  let port: number;
  const imagePath = (path: string) => join(root, path);

  beforeAll(async () => {
    root = replayImage(final);
    const blocklist = join(root, 'blocklist.txt');
    copyFileSync(join(ROOT, 'k8s/blocklist.txt'), blocklist);
    ({ service, port } = await startFromImage(root, final, 'url-filter', { URL_FILTER_BLOCKLIST_FILE: blocklist }));
  }, 180_000);

  afterAll(() => {
    if (service && service.exitCode === null) service.kill('SIGKILL');
  });

  it('holds the build output of every app (compiled from the build context alone) where the entrypoint looks for it', () => {
    for (const app of APPS) expect(existsSync(imagePath(`/app/dist/apps/${app}/src/main.js`))).toBe(true);
    const entrypoint = lastOf(final, 'ENTRYPOINT')!.exec![0];
    const dir = tempDir('entrypoint-');
    for (const app of APPS) expect(runEntrypoint(dir, [app], {}, imagePath(entrypoint)).node).toEqual([imagePath(`/app/dist/apps/${app}/src/main.js`)]);
  });

  it('resolves production dependencies only (a dev dependency is not there)', () => {
    const resolves = (name: string) =>
      spawnSync(process.execPath, ['--preserve-symlinks', '-e', `require.resolve(${JSON.stringify(name)})`], { cwd: imagePath('/app/dist'), encoding: 'utf8' }).status ===
      0;
    expect(resolves('bullmq')).toBe(true);
    expect(resolves('typescript')).toBe(false);
  });

  it('starts a service with production dependencies only, which serves /health and /metrics', async () => {
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual(expect.objectContaining({ service: 'url-filter', status: 'ok' }));
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await metrics.text()).toMatch(/^process_cpu_user_seconds_total\{service="url-filter"\} /m);
  });

  it('serves every HTTP probe path of k8s/ and the HEALTHCHECK’s /health', async () => {
    const paths = new Set(['/health']);
    for (const object of kustomizeBuild(join(ROOT, 'k8s'))) {
      for (const container of podSpecOf(object)?.containers ?? []) {
        if (!String(container.image).startsWith('crawler')) continue;
        for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) if (container[probe]?.httpGet) paths.add(container[probe].httpGet.path);
      }
    }
    expect(paths.size).toBeGreaterThan(1);
    for (const path of paths) expect({ path, status: (await fetch(`http://127.0.0.1:${port}${path}`)).status }).toEqual({ path, status: 200 });
    expect(readFileSync(imagePath(lastOf(final, 'HEALTHCHECK')!.exec![1]), 'utf8')).toContain('GET /health HTTP/1.1');
  });

  it('answers the image’s HEALTHCHECK: healthy while the service serves, unhealthy when nothing listens', async () => {
    const [program, script] = lastOf(final, 'HEALTHCHECK')!.exec!;
    expect(program).toBe('bash');
    const noProcesses = tempDir('proc-');
    const check = (env: Record<string, string>, proc = noProcesses) =>
      spawnSync(program, [imagePath(script), '--proc', proc], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8', timeout: 10_000 });
    expect(check({ PORT: String(port) }).status).toBe(0);
    const closed = await freePort();
    const unhealthy = check({ PORT: String(closed) });
    expect(unhealthy.status).toBe(1);
    expect(unhealthy.stderr).toBe(`health: nothing answers on port ${closed}\n`);
    // A container running a one-shot tool (crawl, seed, status) serves no HTTP and counts as healthy.
    const toolProc = tempDir('proc-');
    mkdirSync(join(toolProc, '1'));
    writeFileSync(join(toolProc, '1/cmdline'), ['node', '/app/dist/apps/crawl/src/main.js', 'https://example.com/'].join('\0'));
    expect(check({ PORT: String(closed) }, toolProc).status).toBe(0);
  });

  it('drains and exits 0 on SIGTERM (what `docker stop` and Kubernetes send)', async () => {
    expect(await stop(service!)).toBe(0);
  });
});

const renderReplayable = render !== undefined && aptReplayable(render);
const withPackages = renderReplayable ? describe : describe.skip;
if (!renderReplayable) process.stderr.write(`test/deploy: this machine is not ${debianOf(final.from)} with Chromium installed; the render image's replay is skipped\n`);

withPackages('the render image, replayed with this machine’s Debian packages', () => {
  let root: string;
  let service: ChildProcess | undefined;
  let port: number;
  const chromium = imageEnv(render).PLUGIN_RENDER_CHROMIUM_PATH;

  beforeAll(async () => {
    root = replayImage(render);
    // The image's absolute path, found in the replayed folder.
    ({ service, port } = await startFromImage(root, render, 'plugin-render', { PLUGIN_RENDER_CHROMIUM_PATH: join(root, chromium) }));
  }, 180_000);

  afterAll(() => {
    if (service && service.exitCode === null) service.kill('SIGKILL');
  });

  it('holds Chromium at PLUGIN_RENDER_CHROMIUM_PATH, from a package the stage installs', () => {
    expect(existsSync(join(root, chromium))).toBe(true);
    const owner = spawnSync('dpkg-query', ['-S', chromium], { encoding: 'utf8' }).stdout.split(':')[0];
    expect(installedPackages(render)).toContain(owner);
  });

  it('starts plugin-render, which launches its Chromium before it reports ready, and stops it on SIGTERM', async () => {
    const live = await fetch(`http://127.0.0.1:${port}/health/live`);
    expect(live.status).toBe(200);
    expect(await stop(service!)).toBe(0);
  });
});
