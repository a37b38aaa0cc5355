import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@crawler/config';
import { createLogger } from '@crawler/logging';
import { RuntimeModule } from '@crawler/runtime';
import { ControlPlaneModule } from './control-plane.module';

describe('control plane: the URL lookup says what the user URL rules make of a URL', () => {
  let app: INestApplication;
  let base: string;
  const dir = mkdtempSync(join(tmpdir(), 'cp-rules-'));

  beforeAll(async () => {
    const config = loadConfig({ URL_FILTER_INCLUDE: 'docs.a.test /docs/**', URL_FILTER_EXCLUDE: '/docs/old/**' }, { dataDir: dir, logLevel: 'silent', port: 0 });
    @Module({
      imports: [RuntimeModule.forRoot({ service: 'control-plane', config, logger: createLogger({ level: 'silent', service: 'control-plane' }) }), ControlPlaneModule],
    })
    class TestModule {}
    app = await NestFactory.create(TestModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
  });

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lookUp = async (url: string) => (await fetch(`${base}/urls?url=${encodeURIComponent(url)}`)).json();

  it('names the exclude rule that drops it, or the include rules it matches none of, and nothing when they let it through', async () => {
    expect(await lookUp('http://docs.a.test/docs/old/x')).toMatchObject({
      state: 'unknown',
      userRules: 'excluded by URL_FILTER_EXCLUDE (--exclude) rule 1: exclude /docs/old/**',
    });
    expect(await lookUp('http://docs.a.test/blog')).toMatchObject({
      userRules: 'not-included: matches none of URL_FILTER_INCLUDE (--include) rule 1 (include docs.a.test /docs/**)',
    });
    expect(await lookUp('http://docs.a.test/docs/new')).not.toHaveProperty('userRules');
    expect(await lookUp('http://www.a.test/blog')).not.toHaveProperty('userRules');
  });
});
