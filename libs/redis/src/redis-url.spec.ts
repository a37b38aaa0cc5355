import { describeRedis, parseRedisUrl, redact } from './redis-url';

describe('parseRedisUrl', () => {
  it('reads one node, its credentials, TLS and database', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379')).toEqual({
      cluster: false,
      nodes: [{ host: '127.0.0.1', port: 6379 }],
      tls: false,
      username: undefined,
      password: undefined,
    });
    expect(parseRedisUrl('rediss://user:p%40ss@redis.internal/3')).toMatchObject({
      cluster: false,
      nodes: [{ host: 'redis.internal', port: 6379 }],
      tls: true,
      username: 'user',
      password: 'p@ss',
      db: 3,
    });
    expect(parseRedisUrl('redis://:secret@[::1]:6380')).toMatchObject({ nodes: [{ host: '::1', port: 6380 }], password: 'secret' });
  });

  it('reads a cluster from its seed nodes', () => {
    expect(parseRedisUrl('redis+cluster://127.0.0.1:7000,127.0.0.1:7001,[::1]:7002/')).toMatchObject({
      cluster: true,
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: '127.0.0.1', port: 7001 },
        { host: '::1', port: 7002 },
      ],
      tls: false,
    });
    expect(parseRedisUrl('rediss+cluster://default:pw@a:7000')).toMatchObject({ cluster: true, tls: true, username: 'default', password: 'pw' });
  });

  it.each([
    ['http://127.0.0.1:6379', /must start with redis:\/\//],
    ['redis://a:1,b:2', /redis\+cluster:\/\//],
    ['redis+cluster://a:7000/2', /no databases/],
    ['redis+cluster://a', /without a port/],
    ['redis://a:99999', /port is not 1-65535/],
    ['redis://a:1/x', /not a database number/],
  ])('refuses %s, naming the setting and what is wrong', (url, reason) => {
    expect(() => parseRedisUrl(url)).toThrow(/^REDIS_URL /);
    expect(() => parseRedisUrl(url)).toThrow(reason);
  });

  it('never repeats a password in a message', () => {
    expect(() => parseRedisUrl('http://u:hunter2@x')).toThrow(/u:\*\*\*@x/);
    expect(redact('redis+cluster://u:hunter2@a:1,b:2')).toBe('redis+cluster://u:***@a:1,b:2');
    expect(describeRedis(parseRedisUrl('redis+cluster://u:hunter2@a:1,b:2'))).toBe('redis+cluster://u:***@a:1,b:2');
  });
});
