import { AddressInfo, createServer, Socket } from 'node:net';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';

/**
 * A server that misbehaves on purpose, one way per path, written on a raw TCP socket so that it can say
 * what no HTTP library would let it say (bad status lines, broken chunking, lying lengths, resets). Every
 * connection carries one request and is closed after it.
 */

/** The request as the server read it. */
interface HostileRequest {
  method: string;
  /** The request target as sent (path and query). */
  path: string;
  /** The path without the query: what routes are matched on. */
  pathname: string;
  /** Header names lower-case. */
  headers: Record<string, string>;
}

/** A route owns the socket: it writes what it likes and closes (or never closes) it. */
export type HostileRoute = (socket: Socket, request: HostileRequest) => void;

export interface HostileServer {
  port: number;
  /** `http://hostile.test:<port><path>`: the name is made up, fetchers are given 127.0.0.1 as its address. */
  url(path: string): string;
  /** The request targets seen, in order of arrival. */
  requests: string[];
  /** Connections open right now (a client that stopped reading and hung up is no longer counted). */
  connections(): number;
  close(): Promise<void>;
}

export const HTML = `<!doctype html><html><head><title>hostile</title></head><body><p>${'all good here. '.repeat(200)}</p></body></html>`;

/** Writes a whole response and closes the connection; the body gets a Content-Length unless one is given. */
export function respond(socket: Socket, status: number, headers: Record<string, string | number>, body: Buffer | string = '') {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const all: Record<string, string | number> = { connection: 'close', ...headers };
  if (!Object.keys(all).some((name) => /^(content-length|transfer-encoding)$/i.test(name))) all['content-length'] = bytes.length;
  socket.end(Buffer.concat([head(status, reason(status), all), bytes]));
}

/** A status line and headers, with the blank line that ends them. */
export function head(status: number | string, text: string, headers: Record<string, string | number>): Buffer {
  const lines = [`HTTP/1.1 ${status} ${text}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

const reason = (status: number) => ({ 200: 'OK', 302: 'Found', 404: 'Not Found' })[status] ?? 'Whatever';

/** Calls `tick` every `ms` until the socket closes. */
function every(socket: Socket, ms: number, tick: () => void) {
  const timer = setInterval(tick, ms);
  socket.once('close', () => clearInterval(timer));
}

let bomb: Buffer | undefined;
/** 50 MB of zeros, gzipped once (about 50 KB). */
function gzipBomb(): Buffer {
  return (bomb ??= gzipSync(Buffer.alloc(50 * 1024 * 1024), { level: 9 }));
}

const BUILT_IN: Record<string, HostileRoute> = {
  /** The head, then one byte of body every 200 ms, forever: never silent long enough for a body timeout. */
  '/drip': (socket) => {
    socket.write(head(200, 'OK', { 'content-type': 'text/html', 'transfer-encoding': 'chunked' }));
    every(socket, 200, () => socket.write('1\r\nx\r\n'));
  },
  /** A chunked HTML body that never ends, written as fast as the client reads. */
  '/endless': (socket) => {
    socket.write(head(200, 'OK', { 'content-type': 'text/html', 'transfer-encoding': 'chunked' }));
    const data = '<p>more</p>'.repeat(1500).slice(0, 16 * 1024);
    const chunk = Buffer.from(`${data.length.toString(16)}\r\n${data}\r\n`);
    const pump = () => {
      while (!socket.destroyed && socket.write(chunk));
    };
    socket.on('drain', pump);
    pump();
  },
  '/gzip-bomb': (socket) => respond(socket, 200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }, gzipBomb()),
  '/gzip': (socket) => respond(socket, 200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }, gzipSync(HTML)),
  '/br': (socket) => respond(socket, 200, { 'content-type': 'text/html', 'content-encoding': 'br' }, brotliCompressSync(HTML)),
  '/deflate': (socket) => respond(socket, 200, { 'content-type': 'text/html', 'content-encoding': 'deflate' }, deflateSync(HTML)),
  /** Deflate without its zlib wrapper, as some servers send it. */
  '/deflate-raw': (socket) => respond(socket, 200, { 'content-type': 'text/html', 'content-encoding': 'deflate' }, deflateRawSync(HTML)),
  '/bad-gzip': (socket) => respond(socket, 200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }, 'this is not gzip, not even close'),
  '/unknown-encoding': (socket) => respond(socket, 200, { 'content-type': 'text/html', 'content-encoding': 'zstd-ish' }, 'whatever'),
  '/redirect-loop': (socket) => respond(socket, 302, { location: '/redirect-loop' }),
  /** Says 100000 bytes, sends 10 and hangs up. */
  '/lying-length': (socket) => {
    socket.end(Buffer.concat([head(200, 'OK', { 'content-type': 'text/html', 'content-length': 100_000 }), Buffer.from('<p>short</p>'.slice(0, 10))]));
  },
  '/bad-status': (socket) => socket.end('HTTP/1.1 abc Nope\r\ncontent-type: text/html\r\ncontent-length: 2\r\n\r\nhi'),
  '/bad-chunked': (socket) => {
    socket.end(Buffer.concat([head(200, 'OK', { 'content-type': 'text/html', 'transfer-encoding': 'chunked' }), Buffer.from('zz\r\nhello\r\n0\r\n\r\n')]));
  },
  /** One 64 KB header. */
  '/huge-headers': (socket) => respond(socket, 200, { 'content-type': 'text/html', 'x-huge': 'h'.repeat(64 * 1024) }, 'hi'),
  /** The head of a 1000-byte response, then a TCP reset. */
  '/reset': (socket) => {
    socket.write(head(200, 'OK', { 'content-type': 'text/html', 'content-length': 1000 }), () => {
      setTimeout(() => socket.resetAndDestroy(), 20);
    });
  },
  /** Nothing for 5 s, then a fine answer. */
  '/slow-headers': (socket) => {
    const timer = setTimeout(() => respond(socket, 200, { 'content-type': 'text/html' }, HTML), 5000);
    socket.once('close', () => clearTimeout(timer));
  },
};

/** /chain/N redirects to /chain/N-1 … /chain/0 answers 200. */
function chain(socket: Socket, request: HostileRequest): boolean {
  const match = /^\/chain\/(\d+)$/.exec(request.pathname);
  if (!match) return false;
  const n = Number(match[1]);
  if (n === 0) respond(socket, 200, { 'content-type': 'text/html' }, HTML);
  else respond(socket, 302, { location: `/chain/${n - 1}` });
  return true;
}

/** Listens on 127.0.0.1 at a random port; `extra` routes (by path, without query) win over the built-in ones. */
export async function startHostileServer(extra: Record<string, HostileRoute> = {}): Promise<HostileServer> {
  const routes = { ...BUILT_IN, ...extra };
  // Compressing the bomb takes a few hundred ms: done now, not inside the first request's timed fetch.
  gzipBomb();
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // Clients hang up on us all the time here: that is the point.
    socket.on('error', () => undefined);
    let received = Buffer.alloc(0);
    const onData = (data: Buffer) => {
      received = Buffer.concat([received, data]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) {
        if (received.length > 64 * 1024) socket.destroy();
        return;
      }
      socket.off('data', onData);
      socket.resume();
      const request = parseRequest(received.subarray(0, end).toString('latin1'));
      requests.push(request.path);
      const route = routes[request.pathname];
      if (route) route(socket, request);
      else if (!chain(socket, request)) respond(socket, 404, { 'content-type': 'text/plain' }, 'not found');
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path) => `http://hostile.test:${port}${path}`,
    requests,
    connections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        sockets.forEach((socket) => socket.destroy());
        server.close(() => resolve());
      }),
  };
}

function parseRequest(text: string): HostileRequest {
  const [line, ...lines] = text.split('\r\n');
  const [method = '', path = ''] = line.split(' ');
  const headers: Record<string, string> = {};
  for (const header of lines) {
    const colon = header.indexOf(':');
    if (colon > 0) headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
  }
  return { method, path, pathname: path.split('?')[0], headers };
}
