import net from 'node:net';
import { FetchErrorCode, HttpFetchError } from './http-errors';

/** A proxy as the downloader uses it: where it is, and what it is shown as (never with its credentials). */
export interface ProxyRoute {
  host: string;
  port: number;
  /** `http://host:port`: the proxy in every message and log line. */
  shown: string;
  /** `Basic …`, sent with CONNECT only; never logged. */
  authorization?: string;
}

/** A proxy's answer to CONNECT larger than this is no proxy's. */
const MAX_ANSWER_BYTES = 16 * 1024;

/**
 * Opens a tunnel to `address:port` through the proxy (HTTP CONNECT, RFC 9110 §9.3.6) and answers its socket,
 * over which the request (or TLS, then the request) goes as if straight to the site. The tunnel is asked for the
 * vetted ADDRESS, never the name: the proxy resolves nothing, so it can reach no address the resolver refused.
 */
export function openTunnel(proxy: ProxyRoute, address: string, port: number, timeoutMs: number): Promise<net.Socket> {
  const target = address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: proxy.host, port: proxy.port });
    let answer = Buffer.alloc(0);
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new HttpFetchError(`proxy ${proxy.shown} opened no tunnel to ${target} within ${timeoutMs} ms`, FetchErrorCode.ProxyTimeout)),
      timeoutMs,
    );
    socket.setNoDelay(true);
    socket.once('error', fail);
    const closed = () => fail(new HttpFetchError(`proxy ${proxy.shown} closed the connection before opening a tunnel to ${target}`, FetchErrorCode.ProxyRefused));
    socket.once('close', closed);
    socket.once('connect', () => {
      const auth = proxy.authorization ? `proxy-authorization: ${proxy.authorization}\r\n` : '';
      socket.write(`CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n${auth}\r\n`);
    });
    // Read with 'readable' rather than 'data', which would leave the socket flowing with nobody listening yet.
    const onReadable = () => {
      for (let chunk: Buffer | null; (chunk = socket.read()) !== null; ) answer = Buffer.concat([answer, chunk]);
      const end = answer.indexOf('\r\n\r\n');
      if (end < 0) {
        if (answer.length > MAX_ANSWER_BYTES) fail(new HttpFetchError(`proxy ${proxy.shown} sent no HTTP answer to CONNECT`, FetchErrorCode.ProxyRefused));
        return;
      }
      socket.off('readable', onReadable);
      const statusLine = answer.subarray(0, answer.indexOf('\r\n')).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
      if (!status?.startsWith('2')) {
        const said = status ? `answered ${statusLine.slice(9, 80)}` : 'sent no HTTP answer';
        return fail(new HttpFetchError(`proxy ${proxy.shown} ${said} to CONNECT ${target}`, FetchErrorCode.ProxyRefused));
      }
      clearTimeout(timer);
      socket.off('error', fail);
      socket.off('close', closed);
      // Bytes after the answer are the site's already (a server that speaks first): given back to the next reader.
      const rest = answer.subarray(end + 4);
      if (rest.length) socket.unshift(rest);
      resolve(socket);
    };
    socket.on('readable', onReadable);
  });
}
