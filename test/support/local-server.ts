import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts a test's own HTTP server on 127.0.0.1 at a free port, and answers that port. */
export async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Stops it, dropping kept-alive connections so that close does not wait for them. */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
