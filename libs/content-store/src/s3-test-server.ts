import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface S3TestServer {
  /** `http://S3RVER:S3RVER@127.0.0.1:<port>`, ready for MinioContentStore. */
  url: string;
  close(): Promise<void>;
}

/** The slice of s3rver (untyped, a devDependency) used here. */
interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverCtor = new (options: Record<string, unknown>) => S3rverInstance;

/**
 * An S3-compatible server for tests: s3rver on 127.0.0.1, a free port, a fresh temp directory, removed on
 * close. When S3_URL is set (CI runs one standalone server, see scripts/s3-server.js), that URL is
 * returned instead and close() leaves the server alone.
 */
export async function startS3TestServer(): Promise<S3TestServer> {
  const external = process.env.S3_URL;
  if (external) return { url: external, close: async () => undefined };

  // Required here, not at the top, so production code importing this library never loads a devDependency.
  const S3rver = require('s3rver') as S3rverCtor;
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 's3rver-'));
  // Port 0: the OS picks a free port, so parallel jest workers never collide.
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true });
  let port: number;
  try {
    ({ port } = await server.run());
  } catch (err) {
    await fs.rm(directory, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `http://S3RVER:S3RVER@127.0.0.1:${port}`,
    close: async () => {
      await server.close();
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
}
