import { createServer, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { type MonitoredCommand, monitorCommands } from './testing';

const NODE_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

describe('monitorCommands', () => {
  it('hands over every command the server runs, with its arguments and where it came from', async () => {
    const { hostname, port } = new URL(NODE_URL);
    const key = `t-monitor-${process.pid}`;
    const seen: MonitoredCommand[] = [];
    const monitor = await monitorCommands({ host: hostname, port: Number(port || 6379) }, (command) => {
      if (command.args.includes(key)) seen.push(command);
    });
    const client = new Redis(NODE_URL);
    try {
      await client.set(key, 'a "quoted" value', 'PX', 10_000);
      await client.eval("return redis.call('get', KEYS[1])", 1, key);
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      monitor.stop();
      await client.quit();
    }
    expect(seen.map((c) => c.args)).toEqual([
      ['set', key, 'a "quoted" value', 'PX', '10000'],
      ['eval', "return redis.call('get', KEYS[1])", '1', key],
      ['get', key],
    ]);
    expect(seen[0].source).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(seen[2].source).toBe('lua');
  });

  it('reads the commands that come in the same read as MONITOR’s own reply, as a busy server sends them', async () => {
    // ioredis's monitor() fails these as replies to no command ("Command queue state error").
    const server = createServer((socket) =>
      socket.once('data', () => socket.write('+OK\r\n+1795994046.735711 [0 127.0.0.1:37556] "get" "k"\r\n+1795994046.735800 [0 lua] "del" "k"\r\n')),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const seen: MonitoredCommand[] = [];
    const monitor = await monitorCommands({ host: '127.0.0.1', port: (server.address() as AddressInfo).port }, (command) => seen.push(command));
    await new Promise((resolve) => setTimeout(resolve, 50));
    monitor.stop();
    await new Promise((resolve) => server.close(resolve));
    expect(seen).toEqual([
      { args: ['get', 'k'], source: '127.0.0.1:37556' },
      { args: ['del', 'k'], source: 'lua' },
    ]);
  });
});
