import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { loadConfig } from '@crawler/config';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { argv, ComposeService, composeSchemaFile, composeSchemaProblems, environmentOf, loadCompose } from './compose';
import { configProblem, mainOf, ROOT, runEntrypoint, SERVICES, unknownEnvNames } from './deploy-support';
import { parseDockerfile } from './dockerfile';
import { packageVersion } from './kubernetes-schemas';

/**
 * docker-compose.yml checked offline: valid against the Compose Specification's JSON schema, and a cluster
 * that would work: every service of apps/ started by name from the one image, configured only with settings
 * the crawler reads, Redis with AOF on a volume, MinIO on a volume with its bucket made, the control plane
 * published, and nothing that stops `--scale downloader=N`.
 */

const FILE = join(ROOT, 'docker-compose.yml');
const compose = loadCompose(FILE); // interpolated as with an empty shell: every ${VAR:-default} at its default
const services = compose.services;
const names = Object.keys(services);

/** The services that run the crawler's image (built from this checkout's Dockerfile). */
const crawlerServices = Object.entries(services).filter(([, s]) => s.build !== undefined);
const isCrawler = (s: ComposeService) => s.build !== undefined;

function dockerCompose(): boolean {
  return spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;
}
const withDockerCompose = dockerCompose() ? it : it.skip;

describe('docker-compose.yml', () => {
  afterAll(removeTempDirs);

  it(`is valid against the Compose Specification schema (${composeSchemaFile().split('node_modules/')[1]}, dclint ${packageVersion('dclint')})`, () => {
    expect(composeSchemaProblems(compose)).toEqual([]);
  });

  it('stays valid whatever the shell sets (every interpolated value)', () => {
    const custom = loadCompose(FILE, {
      MINIO_ROOT_USER: 'someone',
      MINIO_ROOT_PASSWORD: 'a-long-password',
      S3_BUCKET: 'pages',
      CONTROL_PLANE_PORT: '8080',
      CRAWLER_IMAGE: 'registry.example/crawler:1',
      LOG_LEVEL: 'debug',
    });
    expect(composeSchemaProblems(custom)).toEqual([]);
    const env = environmentOf(custom.services.frontier);
    expect(configProblem(env)).toBeUndefined();
    expect(new URL(env.S3_URL).username).toBe('someone');
  });

  it('rejects what the schema forbids (the validation is real)', () => {
    const broken = JSON.parse(JSON.stringify(compose));
    broken.services.frontier.comand = ['frontier'];
    broken.services.redis.healthcheck.interval = 5;
    expect(composeSchemaProblems(broken)).toEqual(
      expect.arrayContaining([expect.stringContaining('/services/frontier must NOT have additional properties'), expect.stringContaining('/services/redis/healthcheck/interval')]),
    );
  });

  withDockerCompose('is accepted by `docker compose config`', () => {
    const result = spawnSync('docker', ['compose', '-f', FILE, 'config', '--quiet'], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('has a service per service under apps/ (all but the crawl CLI), each starting that very service by name', () => {
    const dir = tempDir('entrypoint-');
    for (const name of SERVICES) {
      const service = services[name];
      expect({ name, defined: Boolean(service), crawlerImage: service && isCrawler(service) }).toEqual({ name, defined: true, crawlerImage: true });
      expect(service.entrypoint).toBeUndefined(); // the image's entrypoint starts the program the command names
      const run = runEntrypoint(dir, argv(service.command));
      expect({ name, status: run.status, node: run.node }).toEqual({ name, status: 0, node: [mainOf(name)] });
    }
  });

  it('builds the crawler image from this checkout’s Dockerfile, once, under one name', () => {
    const images = new Set(crawlerServices.map(([, s]) => s.image));
    expect(images.size).toBe(1);
    for (const [, service] of crawlerServices) {
      const context = typeof service.build === 'string' ? service.build : service.build!.context ?? '.';
      const dockerfile = typeof service.build === 'string' ? 'Dockerfile' : service.build!.dockerfile ?? 'Dockerfile';
      expect(parseDockerfile(join(ROOT, context, dockerfile)).stages.length).toBeGreaterThan(1);
    }
  });

  it('gives every crawler container only settings the crawler reads, with values it accepts', () => {
    for (const [name, service] of crawlerServices) {
      const env = environmentOf(service);
      const pipeline = SERVICES.includes(name);
      expect({ name, unknown: unknownEnvNames(env), invalid: pipeline ? configProblem(env) : undefined }).toEqual({ name, unknown: [], invalid: undefined });
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

  it('runs MinIO on a named volume, with the bucket made before any crawler service starts', () => {
    const minio = services.minio;
    const dataDir = argv(minio.command)[1];
    expect(argv(minio.command)[0]).toBe('server');
    expect(minio.volumes).toContainEqual(`minio-data:${dataDir}`);
    expect(Object.keys(compose.volumes ?? {})).toContain('minio-data');
    expect(minio.healthcheck?.test).toBeDefined();

    const [initName, init] = Object.entries(services).find(([, s]) => /\bmc mb\b/.test(argv(s.command).join(' ')))!;
    expect(init.depends_on).toEqual({ minio: { condition: 'service_healthy' } });
    const initEnv = environmentOf(init);
    for (const [name, service] of crawlerServices.filter(([n]) => SERVICES.includes(n))) {
      const env = environmentOf(service);
      expect({ name, dependsOn: (service.depends_on as Record<string, { condition: string }>)[initName]?.condition }).toEqual({ name, dependsOn: 'service_completed_successfully' });
      expect(loadConfig(env).s3Bucket).toBe(initEnv.S3_BUCKET);
    }
  });

  it('points REDIS_URL and S3_URL at the Redis and MinIO services, with the credentials MinIO is given', () => {
    const env = environmentOf(services.frontier);
    expect(new URL(env.REDIS_URL).hostname).toBe('redis');
    const s3 = new URL(env.S3_URL);
    expect(s3.hostname).toBe('minio');
    expect(s3.port).toBe('9000'); // MinIO's API port (`server` without --address)
    const minioEnv = environmentOf(services.minio);
    expect([decodeURIComponent(s3.username), decodeURIComponent(s3.password)]).toEqual([minioEnv.MINIO_ROOT_USER, minioEnv.MINIO_ROOT_PASSWORD]);
    expect(minioEnv.MINIO_ROOT_PASSWORD.length).toBeGreaterThanOrEqual(8);
    const init = environmentOf(Object.values(services).find((s) => /\bmc mb\b/.test(argv(s.command).join(' ')))!);
    expect([init.MINIO_ROOT_USER, init.MINIO_ROOT_PASSWORD]).toEqual([minioEnv.MINIO_ROOT_USER, minioEnv.MINIO_ROOT_PASSWORD]);
  });

  it('publishes the control plane on a host port, to the port it listens on', () => {
    const controlPlane = services['control-plane'];
    const port = loadConfig(environmentOf(controlPlane)).port;
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
    expect(loadConfig(environmentOf(services.downloader)).downloader.id).toBeUndefined();
  });

  it('waits only for services that exist and can report what is awaited', () => {
    const image = parseDockerfile(join(ROOT, 'Dockerfile'));
    const imageHealthcheck = image.stages[image.stages.length - 1].instructions.some((i) => i.keyword === 'HEALTHCHECK');
    for (const [name, service] of Object.entries(services)) {
      const dependsOn = Array.isArray(service.depends_on) ? Object.fromEntries(service.depends_on.map((d) => [d, { condition: 'service_started' }])) : service.depends_on ?? {};
      for (const [dependency, { condition }] of Object.entries(dependsOn)) {
        expect({ name, dependency, exists: names.includes(dependency) }).toEqual({ name, dependency, exists: true });
        if (condition !== 'service_healthy') continue;
        const target = services[dependency];
        const healthcheck = target.healthcheck?.disable ? false : Boolean(target.healthcheck?.test) || (isCrawler(target) && imageHealthcheck);
        expect({ name, dependency, healthcheck }).toEqual({ name, dependency, healthcheck: true });
      }
    }
  });

  it('starts the cluster CLI only on demand, pointed at the control plane', () => {
    const cli = Object.entries(services).find(([name, s]) => isCrawler(s) && !SERVICES.includes(name));
    expect(cli).toBeDefined();
    const [, service] = cli!;
    expect(service.profiles?.length).toBeGreaterThan(0);
    const url = new URL(environmentOf(service).CONTROL_PLANE_URL);
    expect(url.hostname).toBe('control-plane');
    expect(Number(url.port)).toBe(loadConfig(environmentOf(services['control-plane'])).port);
    const run = runEntrypoint(tempDir('entrypoint-'), argv(service.command));
    expect(run.status).toBe(0);
    expect(run.node?.[0]).toBe(join(ROOT, 'dist/apps/crawl/src/cluster-cli.js'));
  });
});
