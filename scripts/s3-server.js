#!/usr/bin/env node
/**
 * Standalone S3-compatible server (s3rver) for CI and for running the distributed mode without MinIO.
 *   S3_PORT  listening port                 (default 9000)
 *   S3_DIR   where buckets are stored       (default ./.s3-data)
 *   S3_HOST  listening address              (default 127.0.0.1; 0.0.0.0 to serve other containers)
 * Credentials are s3rver's fixed defaults, S3RVER / S3RVER. Stops on SIGTERM / SIGINT.
 */
'use strict';

const fs = require('node:fs/promises');
const path = require('node:path');
const S3rver = require('s3rver');
const FilesystemStore = require('s3rver/lib/stores/filesystem');

// s3rver removes a key's parent directories when their last object is deleted. A PUT into the same
// directory at that moment cannot open its file, and the unhandled stream error kills the server (seen
// under a crawl's churn of staging/ objects). S3 has no directories: keep them, delete only the files.
FilesystemStore.prototype.deleteObject = async function deleteObject(bucket, key) {
  const files = ['object', 'object.md5', 'metadata.json'].map((kind) => this.getResourcePath(bucket, key, kind));
  await Promise.all(
    files.map((file) =>
      fs.unlink(file).catch((err) => {
        if (err.code !== 'ENOENT') throw err;
      }),
    ),
  );
};

const host = process.env.S3_HOST || '127.0.0.1';
const port = Number(process.env.S3_PORT || 9000);
const directory = path.resolve(process.env.S3_DIR || './.s3-data');

if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`S3_PORT must be a port number, got ${JSON.stringify(process.env.S3_PORT)}`);
  process.exit(1);
}

const server = new S3rver({ address: host, port, directory, silent: true });

server.run().then(
  (address) => console.log(`s3 server listening on http://S3RVER:S3RVER@${host}:${address.port}`),
  (err) => {
    console.error(`s3 server failed to start: ${err.message}`);
    process.exit(1);
  },
);

let stopping = false;
function stop(signal) {
  if (stopping) return;
  stopping = true;
  // close() waits for open connections; a client holding one must not keep the process alive forever.
  setTimeout(() => process.exit(0), 5000).unref();
  server.close().then(
    () => process.exit(0),
    (err) => {
      console.error(`s3 server failed to stop cleanly after ${signal}: ${err.message}`);
      process.exit(1);
    },
  );
}
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
