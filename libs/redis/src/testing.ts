import { createServer, type Server, type Socket, connect } from 'node:net';

/**
 * A TCP proxy in front of a Redis node that can lose a reply the way a crash does: the request reaches Redis
 * and takes effect, and the connection is cut before the reply reaches the client. Tests of what a client
 * does with a reply it never got.
 */
export class ReplyLosingProxy {
  private readonly sockets = new Set<Socket>();
  /** Lower-case command names whose next reply is lost. */
  private readonly armed = new Set<string>();
  /** Replies lost so far. */
  lost = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<ReplyLosingProxy> {
    let proxy: ReplyLosingProxy | undefined;
    const server = createServer((client) => proxy!.pipe(client, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
    proxy = new ReplyLosingProxy(server, address.port);
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The next request that carries `command` is executed by Redis, and its connection is then cut before the reply. */
  loseNextReplyTo(command: string): void {
    this.armed.add(command.toLowerCase());
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: Socket, target: { host: string; port: number }): void {
    const upstream = connect(target.port, target.host);
    this.sockets.add(client).add(upstream);
    let cutting = false;
    client.on('data', (chunk: Buffer) => {
      if (!cutting) cutting = this.takeArmed(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!cutting) {
        client.write(chunk);
        return;
      }
      // Redis answers a read's commands once it has run them all: the armed command took effect.
      this.lost++;
      client.destroy();
      upstream.destroy();
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  }

  /** Whether the request carries an armed command (as a RESP bulk string), disarming it. */
  private takeArmed(chunk: Buffer): boolean {
    const text = chunk.toString('latin1').toLowerCase();
    for (const command of this.armed) {
      if (text.includes(`\r\n${command}\r\n`)) {
        this.armed.delete(command);
        return true;
      }
    }
    return false;
  }
}

/** A command as Redis's MONITOR reported it: its arguments, the name first as the client sent it, and where it ran from (`lua`, or the client's address). */
export interface MonitoredCommand {
  args: string[];
  source: string;
}

export interface CommandMonitor {
  stop(): void;
}

/**
 * Redis's MONITOR on a socket of its own: every command the server runs from now on is handed to `onCommand`.
 * Not ioredis's `monitor()`: on a busy server the first lines come in the same read as MONITOR's own reply,
 * before ioredis has switched the connection to monitoring, and it fails them as replies to no command
 * ("Command queue state error"), rejecting the monitor or throwing from its socket handler.
 */
export function monitorCommands(server: { host?: string; port?: number }, onCommand: (command: MonitoredCommand) => void): Promise<CommandMonitor> {
  const socket = connect(server.port ?? 6379, server.host ?? '127.0.0.1');
  const monitor = { stop: () => void socket.destroy() };
  return new Promise((resolve, reject) => {
    let buffered = '';
    let monitoring = false;
    socket.once('connect', () => socket.write('MONITOR\r\n'));
    socket.on('error', (error) => (monitoring ? undefined : reject(error)));
    socket.on('data', (chunk: Buffer) => {
      const lines = (buffered + chunk.toString('utf8')).split('\r\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (!monitoring) {
          if (line !== '+OK') return reject(new Error(`MONITOR answered ${line}`));
          monitoring = true;
          resolve(monitor);
        } else if (line.startsWith('+')) {
          onCommand(monitoredCommand(line.slice(1)));
        }
      }
    });
  });
}

/** `1795994046.735711 [0 127.0.0.1:37556] "evalsha" "e7b1…" "1"`, read as ioredis reads it. */
function monitoredCommand(line: string): MonitoredCommand {
  const space = line.indexOf(' ');
  const quote = line.indexOf('"');
  const args = line
    .slice(quote + 1, -1)
    .split('" "')
    .map((arg) => arg.replace(/\\"/g, '"'));
  return { args, source: line.slice(space + 2, quote - 2).split(' ')[1] };
}
