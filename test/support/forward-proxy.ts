import http from 'node:http';
import net from 'node:net';
import { closeServer, listenOnLoopback } from './local-server';

/** One CONNECT the proxy was asked for. */
export interface Tunnel {
  /** The request target as asked: `127.0.0.1:8443`, `[::1]:80`, `docs.example.com:443`. */
  target: string;
  /** The Proxy-Authorization header, decoded (`user:password`), or undefined. */
  credentials?: string;
  /** 200 when the tunnel opened, else the status it answered. */
  status: number;
  /** The port the tunnel's connection to the target came from: the target sees it as its client's port. */
  fromPort?: number;
  /** Bytes carried each way once the tunnel was open. */
  up: number;
  down: number;
}

/**
 * A forward proxy on loopback speaking CONNECT (RFC 9110 §9.3.6), as squid or tinyproxy do for HTTPS: it connects
 * wherever it is asked and pipes the bytes both ways, recording every tunnel. With `credentials` it answers 407
 * without them. It checks no address: whatever the crawler must refuse, the crawler refuses before asking.
 */
export class ForwardProxy {
  readonly tunnels: Tunnel[] = [];
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  private constructor(
    private readonly server: http.Server,
    private readonly credentials?: string,
  ) {}

  static async start(options: { credentials?: string } = {}): Promise<ForwardProxy> {
    const server = http.createServer((_req, res) => res.writeHead(405, { allow: 'CONNECT' }).end('this proxy only tunnels (CONNECT)\n'));
    const proxy = new ForwardProxy(server, options.credentials);
    server.on('connect', (req, client: net.Socket, head: Buffer) => proxy.tunnel(req, client, head));
    proxy.port = await listenOnLoopback(server);
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Whether a connection a server saw, from this port, came through this proxy. */
  carried(remotePort: number | undefined): boolean {
    return this.tunnels.some((t) => t.fromPort === remotePort);
  }

  private tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer) {
    const auth = req.headers['proxy-authorization'];
    const credentials = auth?.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString() : undefined;
    const record: Tunnel = { target: req.url ?? '', ...(credentials ? { credentials } : {}), status: 200, up: 0, down: 0 };
    this.tunnels.push(record);
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    if (this.credentials && credentials !== this.credentials) {
      record.status = 407;
      return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="test"\r\ncontent-length: 0\r\n\r\n');
    }
    const target = /^\[?([^\]]+)\]?:(\d+)$/.exec(record.target);
    if (!target) {
      record.status = 400;
      return void client.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
    }
    const upstream = net.connect({ host: target[1], port: Number(target[2]) });
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    upstream.once('error', () => {
      if (upstream.connecting) {
        record.status = 502;
        client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
      } else client.destroy();
    });
    upstream.once('connect', () => {
      record.fromPort = upstream.localPort;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      client.on('data', (chunk: Buffer) => (record.up += chunk.length));
      upstream.on('data', (chunk: Buffer) => (record.down += chunk.length));
      client.pipe(upstream).on('error', () => upstream.destroy());
      upstream.pipe(client).on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await closeServer(this.server);
  }
}
