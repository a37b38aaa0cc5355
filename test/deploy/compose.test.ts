import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '@crawler/config';
import { parseRedisUrl } from '@crawler/redis';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { argv, ComposeFile, ComposeService, composeSchemaFile, composeSchemaProblems, environmentOf, loadCompose } from './compose';
import { configProblem, mainOf, ROOT, runEntrypoint, SERVICES, servicesKeepingRecords, unknownEnvNames } from './deploy-support';
import { DockerStage, imageEnv, imageInstructions, parseDockerfile, stageNamed } from './dockerfile';
import { packageVersion } from './kubernetes-schemas';

/**
 * docker-compose.yml checked offline: valid against the Compose Specification's JSON schema, and a cluster
 * that would work: every service of the service map and every plugin started by name from the crawler's image
 * (plugin-render from its render target, with Chromium), configured only with settings the crawler reads,
 * Redis with AOF on a volume, MinIO on a volume with its bucket made, the control plane published, and
 * nothing that stops `--scale downloader=N`. The same checks
 * hold with docker-compose.cluster.yml over it (the crawl on a Redis Cluster), whose own checks follow.
 */

const FILE = join(ROOT, 'docker-compose.yml');
const CLUSTER_FILE = join(ROOT, 'docker-compose.cluster.yml');

/** The two ways to run it, each checked by the same tests: the Compose files of each. */
const SETUPS: [string, string[]][] = [
  ['docker-compose.yml', [FILE]],
  ['docker-compose.yml with docker-compose.cluster.yml', [FILE, CLUSTER_FILE]],
];

const isCrawler = (s: ComposeService) => s.build !== undefined;

const dockerfiles = new Map<string, DockerStage[]>();

/** The Dockerfile stage a crawler service's image is built from: its build target, or the last stage (Docker's default). */
function imageStageOf(service: ComposeService): DockerStage {
  const build = typeof service.build === 'string' ? { context: service.build } : service.build!;
  const file = join(ROOT, build.context ?? '.', build.dockerfile ?? 'Dockerfile');
  if (!dockerfiles.has(file)) dockerfiles.set(file, parseDockerfile(file).stages);
  const stages = dockerfiles.get(file)!;
  const stage = build.target === undefined ? stages[stages.length - 1] : stageNamed(stages, build.target);
  if (!stage) throw new Error(`no stage ${build.target} in the Dockerfile`);
  return stage;
}

/** The secrets a service mounts (short syntax: their names). */
const secretsOf = (service: ComposeService) => ((service.secrets as string[] | undefined) ?? []).map(String);

/**
 * A container's environment as its programs see it: a setting naming /run/secrets/<name>, where Compose mounts
 * a secret the service is given, names a file holding a sample value instead.
 */
function settingsOf(service: ComposeService): Record<string, string> {
  const env = environmentOf(service);
  for (const [name, value] of Object.entries(env)) {
    const secret = /^\/run\/secrets\/([\w.-]+)$/.exec(value)?.[1];
    if (!secret) continue;
    expect({ name, secret, mounted: secretsOf(service).includes(secret) }).toEqual({ name, secret, mounted: true });
    const file = `${tempDir('compose-secret-')}/${secret}`;
    writeFileSync(file, 'sample-secret-value-0123456789\n');
    env[name] = file;
  }
  return env;
}

function dockerCompose(): boolean {
  return spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;
}
const withDockerCompose = dockerCompose() ? it : it.skip;

afterAll(removeTempDirs);

/** The services that run the crawler's image (built from this checkout's Dockerfile). */
const crawlerServicesOf = (compose: ComposeFile) => Object.entries(compose.services).filter(([, s]) => isCrawler(s));

/** A service's dependencies in the long form, whichever form it is written in. */
const dependenciesOf = (service: ComposeService): Record<string, { condition: string }> =>
  Array.isArray(service.depends_on) ? Object.fromEntries(service.depends_on.map((d) => [d, { condition: 'service_started' }])) : (service.depends_on ?? {});

describe.each(SETUPS)('%s', (_, files) => {
  const compose = loadCompose(files); // interpolated as with an empty shell: every ${VAR:-default} at its default
  const services = compose.services;
  const names = Object.keys(services);
  const crawlerServices = crawlerServicesOf(compose);

  it(`is valid against the Compose Specification schema (${composeSchemaFile().split('node_modules/')[1]}, dclint ${packageVersion('dclint')})`, () => {
    expect(composeSchemaProblems(compose)).toEqual([]);
  });

  it('stays valid whatever the shell sets (every interpolated value)', () => {
    const custom = loadCompose(files, {
      MINIO_ROOT_USER: 'someone',
      MINIO_ROOT_PASSWORD: 'a-long-password',
      S3_BUCKET: 'pages',
      CONTROL_PLANE_PORT: '8080',
      CRAWLER_IMAGE: 'registry.example/crawler:1',
      CRAWLER_RENDER_IMAGE: 'registry.example/crawler-render:1',
      LOG_LEVEL: 'debug',
    });
    expect(composeSchemaProblems(custom)).toEqual([]);
    const env = settingsOf(custom.services.frontier);
    expect(configProblem(env)).toBeUndefined();
    expect(new URL(env.S3_URL).username).toBe('someone');
  });

  it('rejects what the schema forbids (the validation is real)', () => {
    const broken = JSON.parse(JSON.stringify(compose));
    broken.services.frontier.comand = ['frontier'];
    broken.services.redis.healthcheck.interval = 5;
    expect(composeSchemaProblems(broken)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('/services/frontier must NOT have additional properties'),
        expect.stringContaining('/services/redis/healthcheck/interval'),
      ]),
    );
  });

  withDockerCompose('is accepted by `docker compose config`', () => {
    const result = spawnSync('docker', ['compose', ...files.flatMap((f) => ['-f', f]), 'config', '--quiet'], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('has a service per service of the service map and per plugin, each starting that very service by name', () => {
    const dir = tempDir('entrypoint-');
    for (const name of SERVICES) {
      const service = services[name];
      expect({ name, defined: Boolean(service), crawlerImage: service && isCrawler(service) }).toEqual({ name, defined: true, crawlerImage: true });
      expect(service.entrypoint).toBeUndefined(); // the image's entrypoint starts the program the command names
      const run = runEntrypoint(dir, argv(service.command));
      expect({ name, status: run.status, node: run.node }).toEqual({ name, status: 0, node: [mainOf(name)] });
    }
  });

  it('builds the crawler images from this checkout’s Dockerfile: the default target for every service but plugin-render, the render stage for it, each under one name', () => {
    const imagesByStage = new Map<DockerStage, Set<string | undefined>>();
    for (const [name, service] of crawlerServices) {
      const stage = imageStageOf(service);
      imagesByStage.set(stage, new Set([...(imagesByStage.get(stage) ?? []), service.image]));
      const target = typeof service.build === 'string' ? undefined : service.build!.target;
      expect({ name, target }).toEqual({ name, target: name === 'plugin-render' ? 'render' : undefined });
    }
    const names = [...imagesByStage.values()];
    expect(names.map((images) => images.size)).toEqual([1, 1]);
    expect(new Set(names.flatMap((images) => [...images])).size).toBe(2); // two targets under one name would overwrite each other
  });

  it('gives plugin-render the Chromium its image holds, and no other service a Chromium', () => {
    for (const [name, service] of crawlerServices) {
      const image = imageEnv(imageStageOf(service));
      const chromium = { ...image, ...settingsOf(service) }.PLUGIN_RENDER_CHROMIUM_PATH;
      expect({ name, chromium }).toEqual({ name, chromium: name === 'plugin-render' ? image.PLUGIN_RENDER_CHROMIUM_PATH : undefined });
    }
    expect(imageEnv(imageStageOf(services['plugin-render'])).PLUGIN_RENDER_CHROMIUM_PATH).toMatch(/^\//);
  });

  it('gives every crawler container only settings the crawler reads, with values it accepts', () => {
    for (const [name, service] of crawlerServices) {
      const env = settingsOf(service);
      const pipeline = SERVICES.includes(name);
      expect({ name, unknown: unknownEnvNames(env), invalid: pipeline ? configProblem(env) : undefined }).toEqual({ name, unknown: [], invalid: undefined });
    }
  });

  it('runs MinIO on a named volume, with the bucket made before any crawler service starts', () => {
    const minio = services.minio;
    const dataDir = argv(minio.command)[1];
    expect(argv(minio.command)[0]).toBe('server');
    expect(minio.volumes).toContainEqual(`minio-data:${dataDir}`);
    expect(Object.keys(compose.volumes ?? {})).toContain('minio-data');
    expect(minio.healthcheck?.test).toBeDefined();

    const [initName, init] = Object.entries(services).find(([, s]) => /\bmc mb\b/.test(argv(s.command).join(' ')))!;
    expect(init.depends_on).toEqual({ minio: { condition: 'service_healthy' } });
    const initEnv = settingsOf(init);
    for (const [name, service] of crawlerServices.filter(([n]) => SERVICES.includes(n))) {
      const env = settingsOf(service);
      expect({ name, dependsOn: (service.depends_on as Record<string, { condition: string }>)[initName]?.condition }).toEqual({
        name,
        dependsOn: 'service_completed_successfully',
      });
      expect(loadConfig(env).s3Bucket).toBe(initEnv.S3_BUCKET);
    }
  });

  it('points S3_URL at the MinIO service, with the credentials MinIO is given', () => {
    const env = settingsOf(services.frontier);
    const s3 = new URL(env.S3_URL);
    expect(s3.hostname).toBe('minio');
    expect(s3.port).toBe('9000'); // MinIO's API port (`server` without --address)
    const minioEnv = settingsOf(services.minio);
    expect([decodeURIComponent(s3.username), decodeURIComponent(s3.password)]).toEqual([minioEnv.MINIO_ROOT_USER, minioEnv.MINIO_ROOT_PASSWORD]);
    expect(minioEnv.MINIO_ROOT_PASSWORD.length).toBeGreaterThanOrEqual(8);
    const init = settingsOf(Object.values(services).find((s) => /\bmc mb\b/.test(argv(s.command).join(' ')))!);
    expect([init.MINIO_ROOT_USER, init.MINIO_ROOT_PASSWORD]).toEqual([minioEnv.MINIO_ROOT_USER, minioEnv.MINIO_ROOT_PASSWORD]);
  });

  it('keeps the records in PostgreSQL on a named volume, RECORDS_URL (its credentials) given to the services that keep records', () => {
    const postgres = services.postgres;
    expect(postgres.image).toMatch(/^postgres:\d+/);
    expect(postgres.volumes).toContainEqual('postgres-data:/var/lib/postgresql/data');
    expect(Object.keys(compose.volumes ?? {})).toContain('postgres-data');
    expect(postgres.healthcheck?.test).toBeDefined();
    const db = settingsOf(postgres);
    const keepers = servicesKeepingRecords();
    expect(keepers.sort()).toEqual(['content-seen', 'control-plane', 'downloader']);
    for (const name of SERVICES) {
      const url = settingsOf(services[name]).RECORDS_URL;
      expect({ name, records: url !== undefined }).toEqual({ name, records: keepers.includes(name) });
      if (url === undefined) continue;
      const target = new URL(url);
      expect({ name, host: target.hostname, port: target.port, db: target.pathname }).toEqual({ name, host: 'postgres', port: '5432', db: `/${db.POSTGRES_DB}` });
      expect([decodeURIComponent(target.username), decodeURIComponent(target.password)]).toEqual([db.POSTGRES_USER, db.POSTGRES_PASSWORD]);
      expect({ name, waitsFor: dependenciesOf(services[name]).postgres?.condition }).toEqual({ name, waitsFor: 'service_healthy' });
    }
    // The credentials come from the shell or .env, and reach both sides.
    const custom = loadCompose(files, { POSTGRES_USER: 'records', POSTGRES_PASSWORD: 'another-long-secret', POSTGRES_DB: 'pages' });
    const url = new URL(settingsOf(custom.services['content-seen']).RECORDS_URL);
    expect([url.username, url.password, url.pathname]).toEqual(['records', 'another-long-secret', '/pages']);
    expect(settingsOf(custom.services.postgres)).toMatchObject({ POSTGRES_USER: 'records', POSTGRES_PASSWORD: 'another-long-secret', POSTGRES_DB: 'pages' });
  });

  it('publishes the control plane on a host port, to the port it listens on', () => {
    const controlPlane = services['control-plane'];
    const port = loadConfig(settingsOf(controlPlane)).port;
    expect(controlPlane.ports).toHaveLength(1);
    const [, containerPort] = /^(?:[\d.]+:)?(\d+):(\d+)$/.exec(String(controlPlane.ports![0]))!.slice(1);
    expect(Number(containerPort)).toBe(port);
  });

  it('lets every pipeline service scale (`--scale downloader=3`): no container name, no host port, no fixed downloader id', () => {
    for (const name of SERVICES.filter((s) => s !== 'control-plane')) {
      const service = services[name];
      expect({ name, container_name: service.container_name, ports: service.ports }).toEqual({ name, container_name: undefined, ports: undefined });
    }
    // Without DOWNLOADER_ID each downloader names itself after its host name, pid and a random suffix.
    expect(loadConfig(settingsOf(services.downloader)).downloader.id).toBeUndefined();
  });

  it('waits only for services that exist and can report what is awaited', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, { condition }] of Object.entries(dependenciesOf(service))) {
        expect({ name, dependency, exists: names.includes(dependency) }).toEqual({ name, dependency, exists: true });
        // A service started by default cannot wait for one that only a profile starts.
        const started = (s: ComposeService) => !s.profiles?.length;
        if (started(service)) expect({ name, dependency, started: started(services[dependency]) }).toEqual({ name, dependency, started: true });
        if (condition !== 'service_healthy') continue;
        const target = services[dependency];
        const imageHealthcheck = () => imageInstructions(imageStageOf(target)).some((i) => i.keyword === 'HEALTHCHECK');
        const healthcheck = target.healthcheck?.disable ? false : Boolean(target.healthcheck?.test) || (isCrawler(target) && imageHealthcheck());
        expect({ name, dependency, healthcheck }).toEqual({ name, dependency, healthcheck: true });
      }
    }
  });

  it('starts the cluster CLI only on demand, pointed at the control plane', () => {
    const cli = Object.entries(services).find(([name, s]) => isCrawler(s) && !SERVICES.includes(name));
    expect(cli).toBeDefined();
    const [, service] = cli!;
    expect(service.profiles?.length).toBeGreaterThan(0);
    const url = new URL(settingsOf(service).CONTROL_PLANE_URL);
    expect(url.hostname).toBe('control-plane');
    expect(Number(url.port)).toBe(loadConfig(settingsOf(services['control-plane'])).port);
    const run = runEntrypoint(tempDir('entrypoint-'), argv(service.command));
    expect(run.status).toBe(0);
    expect(run.node?.[0]).toBe(join(ROOT, 'dist/apps/crawl/src/cluster-cli.js'));
  });

  it('gives the control plane its token as a secret (it and the CLI only), and publishes it on loopback only', () => {
    expect((compose.secrets as Record<string, unknown>).control_plane_token).toEqual({ environment: 'CONTROL_PLANE_TOKEN' });
    const given = Object.entries(services)
      .filter(([, s]) => secretsOf(s).includes('control_plane_token'))
      .map(([name]) => name);
    expect(given.sort()).toEqual(['cli', 'control-plane']);
    expect(loadConfig(settingsOf(services['control-plane'])).controlPlane.token).toBe('sample-secret-value-0123456789');
    for (const service of Object.values(services)) expect(environmentOf(service).CONTROL_PLANE_TOKEN).toBeUndefined();
    for (const [name, service] of Object.entries(services)) {
      for (const port of service.ports ?? []) expect({ name, port: String(port) }).toEqual({ name, port: expect.stringMatching(/^127\.0\.0\.1:/) });
    }
  });
});

describe('docker-compose.yml alone (one Redis)', () => {
  const compose = loadCompose(FILE);
  const services = compose.services;

  it('starts no Redis Cluster node: the default is the single-node crawl', () => {
    expect(Object.keys(services).filter((name) => name.startsWith('redis-cluster'))).toEqual([]);
    for (const [name, service] of crawlerServicesOf(compose).filter(([n]) => SERVICES.includes(n))) {
      expect({ name, redis: new URL(settingsOf(service).REDIS_URL).hostname }).toEqual({ name, redis: 'redis' });
      expect({ name, waitsFor: dependenciesOf(service).redis?.condition }).toEqual({ name, waitsFor: 'service_healthy' });
    }
  });

  it('runs Redis with AOF persistence and noeviction on a named volume', () => {
    const redis = services.redis;
    const command = argv(redis.command).join(' ');
    expect(command).toMatch(/--appendonly yes/);
    expect(command).toMatch(/--maxmemory-policy noeviction/);
    const dataDir = /--dir (\S+)/.exec(command)?.[1] ?? '/data';
    expect(redis.volumes).toContainEqual(expect.stringMatching(new RegExp(`^[\\w-]+:${dataDir}$`)));
    const volume = String(redis.volumes![0]).split(':')[0];
    expect(Object.keys(compose.volumes ?? {})).toContain(volume);
    expect(redis.healthcheck?.test).toBeDefined();
  });
});

describe('docker-compose.yml with docker-compose.cluster.yml (the crawl on a Redis Cluster)', () => {
  const compose = loadCompose([FILE, CLUSTER_FILE]);
  const services = compose.services;
  const nodes = Object.keys(services).filter((name) => /^redis-cluster-\d+$/.test(name));
  const topConfigs = compose.configs as Record<string, { file: string }>;

  /** A file a service is given as a Compose config, by where it is mounted. */
  function configFile(service: ComposeService, target: string): string {
    const config = (service.configs ?? []).find((c) => typeof c !== 'string' && c.target === target) as { source: string };
    expect(config).toBeDefined();
    return join(ROOT, topConfigs[config.source].file);
  }

  /** A node's settings: its config file, then its `--name value` arguments. */
  function redisSettings(service: ComposeService): Record<string, string> {
    const [program, file, ...args] = argv(service.command);
    expect(program).toBe('redis-server');
    const settings: Record<string, string> = {};
    for (const line of readFileSync(configFile(service, file), 'utf8').split('\n')) {
      const m = /^([a-z-]+)\s+(.*?)\s*$/.exec(line);
      if (m) settings[m[1]] = m[2];
    }
    for (let i = 0; i < args.length; i += 2) settings[args[i].replace(/^--/, '')] = args[i + 1];
    return settings;
  }

  it('runs six nodes, each cluster-enabled with AOF and noeviction on a volume of its own, announcing its service name', () => {
    expect(nodes.length).toBe(6);
    const volumes = new Set<string>();
    for (const name of nodes) {
      const node = services[name];
      const settings = redisSettings(node);
      expect({ name, cluster: settings['cluster-enabled'], aof: settings.appendonly, policy: settings['maxmemory-policy'] }).toEqual({
        name,
        cluster: 'yes',
        aof: 'yes',
        policy: 'noeviction',
      });
      expect({ name, announced: settings['cluster-announce-hostname'], endpoint: settings['cluster-preferred-endpoint-type'] }).toEqual({
        name,
        announced: name,
        endpoint: 'hostname',
      });
      const volume = (node.volumes ?? [])
        .map(String)
        .find((v) => v.endsWith(`:${settings.dir}`))
        ?.split(':')[0];
      expect(Object.keys(compose.volumes ?? {})).toContain(volume);
      volumes.add(volume!);
      expect(node.healthcheck?.test).toBeDefined();
      expect({ name, ports: node.ports, profiles: node.profiles }).toEqual({ name, ports: undefined, profiles: undefined });
    }
    expect(volumes.size).toBe(6);
  });

  it('forms the cluster once every node is healthy, with the script the Kubernetes Job runs', () => {
    const init = services['redis-cluster-init'];
    expect(dependenciesOf(init)).toEqual(Object.fromEntries(nodes.map((n) => [n, { condition: 'service_healthy' }])));
    const listed = settingsOf(init).REDIS_CLUSTER_NODES.split(/\s+/);
    expect(listed).toEqual(nodes.map((n) => `${n}:${redisSettings(services[n]).port}`));
    const [shell, script] = argv(init.command);
    expect(shell).toBe('sh');
    expect(configFile(init, script)).toBe(join(ROOT, 'k8s/redis-cluster/form-cluster.sh'));
    expect(init.restart).toBe('no');
  });

  it('points every crawler service at the cluster’s nodes, once it is formed, and no longer starts the single Redis', () => {
    for (const [name, service] of crawlerServicesOf(compose).filter(([n]) => SERVICES.includes(n))) {
      const target = parseRedisUrl(settingsOf(service).REDIS_URL);
      expect({ name, cluster: target.cluster }).toEqual({ name, cluster: true });
      for (const node of target.nodes) {
        expect(nodes).toContain(node.host);
        expect(node.port).toBe(Number(redisSettings(services[node.host]).port));
      }
      const dependsOn = dependenciesOf(service);
      expect({ name, init: dependsOn['redis-cluster-init']?.condition, redis: dependsOn.redis }).toEqual({
        name,
        init: 'service_completed_successfully',
        redis: undefined,
      });
    }
    expect(services.redis.profiles?.length).toBeGreaterThan(0);
  });
});

describe.each(SETUPS)('%s, built and run without a registry', (_, files) => {
  /** Each image a service runs, and the variable that names it instead of its public default. */
  const IMAGE_VARIABLES: Record<string, string> = {
    'redis:7.4-alpine': 'REDIS_IMAGE',
    'postgres:15-alpine': 'POSTGRES_IMAGE',
    'quay.io/minio/minio:RELEASE.2025-09-07T16-13-09Z': 'MINIO_IMAGE',
    'quay.io/minio/mc:RELEASE.2025-08-13T08-35-41Z': 'MINIO_MC_IMAGE',
    'crawler:local': 'CRAWLER_IMAGE',
    'crawler-render:local': 'CRAWLER_RENDER_IMAGE',
  };

  it('names every image by a variable whose default is its public name', () => {
    const defaults = loadCompose(files).services;
    const local = loadCompose(files, Object.fromEntries(Object.values(IMAGE_VARIABLES).map((v) => [v, `offline/${v.toLowerCase()}`]))).services;
    for (const [name, service] of Object.entries(defaults)) {
      const variable = IMAGE_VARIABLES[service.image!];
      expect({ name, image: service.image, variable }).toEqual({ name, image: service.image, variable: expect.any(String) });
      expect({ name, image: local[name].image }).toEqual({ name, image: `offline/${variable.toLowerCase()}` });
    }
  });

  it('builds on NODE_IMAGE when the shell sets it, and trusts the CA file of CRAWLER_BUILD_CA_FILE for npm only (none by default)', () => {
    const compose = loadCompose(files, { CRAWLER_BUILD_CA_FILE: '/etc/ssl/certs/ca-certificates.crt' });
    for (const [name, service] of crawlerServicesOf(compose)) {
      const build = service.build as { args?: string[]; secrets?: string[] };
      expect({ name, args: build.args, secrets: build.secrets }).toEqual({ name, args: ['NODE_IMAGE'], secrets: ['build_ca'] });
    }
    expect((compose.secrets as Record<string, unknown>).build_ca).toEqual({ file: '/etc/ssl/certs/ca-certificates.crt' });
    expect((loadCompose(files).secrets as Record<string, unknown>).build_ca).toEqual({ file: '/dev/null' });
    const stages = parseDockerfile(join(ROOT, 'Dockerfile')).stages;
    const npmCi = stages.flatMap((stage) => stage.instructions).filter((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args.join(' ')));
    expect(npmCi).toHaveLength(2);
    for (const run of npmCi) {
      expect(run.flags.mount).toBe('type=secret,id=build_ca');
      expect(run.args.join(' ')).toMatch(/^NODE_EXTRA_CA_CERTS=\/run\/secrets\/build_ca npm ci /);
    }
  });
});

describe('docker-compose.yml with docker-compose.demo.yml (the demo)', () => {
  const compose = loadCompose([FILE, join(ROOT, 'docker-compose.demo.yml')]);
  const services = compose.services;
  const { demoWeb } = require('../../scripts/demo-web.js') as { demoWeb: () => { sites: string[] } };
  const web = services['demo-web'];
  const address = (web.networks as { default: { ipv4_address: string; aliases: string[] } }).default;

  it('is valid against the Compose Specification schema', () => {
    expect(composeSchemaProblems(compose)).toEqual([]);
  });

  it('serves every site of the demo web under its name, at one fixed address of the project network', () => {
    expect(address.aliases).toEqual(demoWeb().sites);
    const [subnet] = (compose.networks as { default: { ipam: { config: { subnet: string }[] } } }).default.ipam.config;
    expect(address.ipv4_address.split('.').slice(0, 3)).toEqual(subnet.subnet.split('.').slice(0, 3));
    expect(argv(web.entrypoint)).toEqual(['node', '/demo/demo-web.js']);
  });

  it('lets the crawl reach that address alone of the private ones, in every crawler service', () => {
    for (const [name, service] of crawlerServicesOf(compose)) {
      if (service.profiles?.length) continue;
      const env = settingsOf(service);
      expect({ name, allowed: env.DNS_ALLOW_CIDRS, private: env.DNS_ALLOW_PRIVATE }).toEqual({ name, allowed: `${address.ipv4_address}/32`, private: undefined });
      expect(configProblem(env)).toBeUndefined();
    }
  });

  it('seeds the home page of every site once the control plane and the web are healthy, through the CLI', () => {
    const seed = services['demo-seed'];
    const [command, ...seeds] = argv(seed.command);
    expect(command).toBe('seed');
    expect(seeds.map((url) => new URL(url).host)).toEqual(address.aliases);
    expect(seeds.every((url) => new URL(url).pathname === '/')).toBe(true);
    expect(dependenciesOf(seed)).toEqual({ 'control-plane': { condition: 'service_healthy' }, 'demo-web': { condition: 'service_healthy' } });
    expect(secretsOf(seed)).toEqual(['control_plane_token']);
  });
});

describe('the tests’ Compose loader, merging a later file over an earlier one', () => {
  const write = (text: string) => {
    const file = join(tempDir('compose-merge-'), 'compose.yml');
    writeFileSync(file, text);
    return file;
  };
  const base = write(
    'services:\n  app:\n    image: a\n    command: [x, y]\n    environment: {A: "1", B: "2"}\n    depends_on: {db: {condition: service_healthy}}\n    ports: ["80:80"]\n',
  );

  it('merges mappings key by key, replaces scalars and commands, and honours !override and !reset', () => {
    const over = write(
      'services:\n  app:\n    image: b\n    command: [z]\n    environment: {B: "3"}\n    depends_on: !override {cache: {condition: service_started}}\n    ports: !reset []\n',
    );
    expect(loadCompose([base, over]).services.app).toEqual({
      image: 'b',
      command: ['z'],
      environment: { A: '1', B: '3' },
      depends_on: { cache: { condition: 'service_started' } },
    });
  });

  it('refuses what it does not implement (two sequences to merge) rather than merge differently from Compose', () => {
    const over = write('services:\n  app:\n    ports: ["81:81"]\n');
    expect(() => loadCompose([base, over])).toThrow(/services\.app\.ports .* not implemented/);
  });
});
