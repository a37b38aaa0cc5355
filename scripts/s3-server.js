#!/usr/bin/env node
/**
 * A small S3-compatible server for tests, benchmarks and running the distributed mode without MinIO. It
 * answers what the crawler's S3 client asks, path-style: buckets (create, exists, list, location, delete) and
 * objects (put, get with ranges, head, delete, multi-delete, ListObjectsV2), each request's AWS Signature V4
 * checked against the one key pair it knows, as a real server would refuse a wrong secret.
 *
 *   S3_PORT        listening port                   (default 9000; 0 picks a free one)
 *   S3_DIR         where buckets are stored         (default ./.s3-data)
 *   S3_HOST        listening address                (default 127.0.0.1; 0.0.0.0 to serve other containers)
 *   S3_ACCESS_KEY  the access key it accepts        (default S3RVER)
 *   S3_SECRET_KEY  its secret                       (default S3RVER)
 * Prints `s3 server listening on http://ACCESS:SECRET@host:port` once ready. Stops on SIGTERM / SIGINT.
 *
 * Each object is one file: a line of JSON (its key, ETag, content type and user metadata) and then its body,
 * written to a temporary name and renamed, so a reader never sees half an object. Key segments become
 * directories (prefixed, so that `a`, `a/b`, `.` and `..` can never collide or climb out of the bucket).
 * Directories are kept when their last object goes: S3 has none, and a PUT racing a removal must not fail.
 */
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs/promises');
const http = require('node:http');
const path = require('node:path');

const host = process.env.S3_HOST || '127.0.0.1';
const port = Number(process.env.S3_PORT || 9000);
const root = path.resolve(process.env.S3_DIR || './.s3-data');
const accessKey = process.env.S3_ACCESS_KEY || 'S3RVER';
const secretKey = process.env.S3_SECRET_KEY || 'S3RVER';

/** Bodies above this are refused (S3's single PUT allows 5 GiB; nothing the crawler stores comes near this). */
const MAX_BODY_BYTES = 256 * 1024 * 1024;
/** A file name holds 255 bytes; a longer encoded segment is named by its hash (the key itself is in the file). */
const MAX_NAME_BYTES = 240;
const XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`S3_PORT must be a port number, got ${JSON.stringify(process.env.S3_PORT)}`);
  process.exit(1);
}

class S3Error extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const xmlEscape = (s) => String(s).replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]);
const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex');
const hmac = (key, data) => crypto.createHmac('sha256', key).update(data).digest();

function segmentName(kind, segment) {
  const name = kind + encodeURIComponent(segment);
  return Buffer.byteLength(name) <= MAX_NAME_BYTES ? name : `${kind}#${sha256(segment)}`;
}

/** The file of `key` in `bucket`: every segment but the last a directory ('d…'), the last a file ('f…'). */
function objectPath(bucket, key) {
  const segments = key.split('/');
  const last = segments.pop();
  return path.join(root, bucket, ...segments.map((s) => segmentName('d', s)), segmentName('f', last));
}

function bucketPath(bucket) {
  if (!BUCKET_NAME.test(bucket)) throw new S3Error(400, 'InvalidBucketName', `not a bucket name: ${bucket}`);
  return path.join(root, bucket);
}

async function bucketMustExist(bucket) {
  try {
    await fs.access(bucketPath(bucket));
  } catch {
    throw new S3Error(404, 'NoSuchBucket', `no bucket ${bucket}`);
  }
}

/** The AWS Signature V4 of the request, checked as the client computed it: over the path and query as sent. */
function checkSignature(req, rawPath, rawQuery, body) {
  const auth = req.headers.authorization;
  if (!auth) throw new S3Error(403, 'AccessDenied', 'anonymous requests are refused');
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!match) throw new S3Error(400, 'AuthorizationHeaderMalformed', 'expected an AWS4-HMAC-SHA256 authorization header');
  const [, key, date, region, signedHeaders, signature] = match;
  if (key !== accessKey) throw new S3Error(403, 'InvalidAccessKeyId', 'the access key is not known here');
  const payloadHash = req.headers['x-amz-content-sha256'];
  if (!payloadHash) throw new S3Error(400, 'InvalidRequest', 'missing x-amz-content-sha256');
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256(body)) {
    throw new S3Error(400, 'XAmzContentSHA256Mismatch', 'the body does not match its x-amz-content-sha256');
  }
  const names = signedHeaders.split(';');
  const query = rawQuery
    ? rawQuery
        .split('&')
        .sort()
        .map((e) => (e.includes('=') ? e : `${e}=`))
        .join('&')
    : '';
  const canonical = [
    req.method,
    rawPath,
    query,
    `${names.map((n) => `${n}:${String(req.headers[n] ?? '').replace(/ +/g, ' ')}`).join('\n')}\n`,
    signedHeaders,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', req.headers['x-amz-date'], scope, sha256(canonical)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secretKey}`, date), region), 's3'), 'aws4_request');
  const expected = hmac(signingKey, toSign).toString('hex');
  if (!crypto.timingSafeEqual(Buffer.from(expected), Buffer.from(signature))) {
    throw new S3Error(403, 'SignatureDoesNotMatch', 'the request signature does not match (wrong secret?)');
  }
}

async function readObject(file, headOnly = false) {
  let data;
  try {
    data = headOnly ? await readHead(file) : await fs.readFile(file);
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
    throw err;
  }
  const newline = data.indexOf(10);
  const header = JSON.parse(data.subarray(0, newline).toString('utf8'));
  return { header, body: headOnly ? undefined : data.subarray(newline + 1) };
}

/** The header line of an object's file without its body (a HEAD, a listing). */
async function readHead(file) {
  const handle = await fs.open(file, 'r');
  try {
    const chunk = Buffer.alloc(16 * 1024);
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, 0);
    const data = chunk.subarray(0, bytesRead);
    if (data.indexOf(10) >= 0) return data;
    return await fs.readFile(file);
  } finally {
    await handle.close();
  }
}

function objectHeaders(header, mtime) {
  const headers = {
    'content-type': header.contentType,
    etag: `"${header.etag}"`,
    'last-modified': new Date(mtime).toUTCString(),
    'accept-ranges': 'bytes',
  };
  for (const [name, value] of Object.entries(header.meta)) headers[`x-amz-meta-${name}`] = value;
  return headers;
}

async function putObject(req, res, bucket, key, body) {
  await bucketMustExist(bucket);
  if (req.headers['x-amz-copy-source']) throw new S3Error(501, 'NotImplemented', 'copying objects is not supported here');
  const meta = {};
  for (const [name, value] of Object.entries(req.headers)) if (name.startsWith('x-amz-meta-')) meta[name.slice(11)] = value;
  const etag = crypto.createHash('md5').update(body).digest('hex');
  const header = { key, etag, size: body.length, contentType: req.headers['content-type'] || 'binary/octet-stream', meta };
  const file = objectPath(bucket, key);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.part`;
  await fs.writeFile(temporary, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body]));
  await fs.rename(temporary, file);
  res.writeHead(200, { etag: `"${etag}"` }).end();
}

async function getObject(req, res, bucket, key, headOnly) {
  await bucketMustExist(bucket);
  const file = objectPath(bucket, key);
  const found = await readObject(file, headOnly);
  if (!found) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.');
  const { mtimeMs } = await fs.stat(file).catch(() => ({ mtimeMs: Date.now() }));
  const headers = objectHeaders(found.header, mtimeMs);
  const size = found.header.size;
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range || '');
  if (range && (range[1] !== '' || range[2] !== '')) {
    let start = range[1] === '' ? Math.max(0, size - Number(range[2])) : Number(range[1]);
    let end = range[1] === '' || range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
    if (start >= size || start > end) throw new S3Error(416, 'InvalidRange', 'The requested range is not satisfiable');
    start = Math.max(0, start);
    end = Math.max(start, end);
    res.writeHead(206, { ...headers, 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${size}` });
    return void res.end(headOnly ? undefined : found.body.subarray(start, end + 1));
  }
  res.writeHead(200, { ...headers, 'content-length': size });
  res.end(headOnly ? undefined : found.body);
}

async function deleteObject(res, bucket, key) {
  await bucketMustExist(bucket);
  await fs.unlink(objectPath(bucket, key)).catch((err) => {
    if (err.code !== 'ENOENT' && err.code !== 'ENOTDIR') throw err;
  });
  res.writeHead(204).end();
}

async function deleteObjects(res, bucket, body) {
  await bucketMustExist(bucket);
  const keys = [...body.toString('utf8').matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => unescapeXml(m[1]));
  const quiet = /<Quiet>true<\/Quiet>/.test(body.toString('utf8'));
  for (const key of keys) await fs.unlink(objectPath(bucket, key)).catch(() => undefined);
  const deleted = quiet ? '' : keys.map((k) => `<Deleted><Key>${xmlEscape(k)}</Key></Deleted>`).join('');
  sendXml(res, 200, `<DeleteResult xmlns="${XMLNS}">${deleted}</DeleteResult>`);
}

const unescapeXml = (s) => s.replace(/&(lt|gt|amp|apos|quot);/g, (_, e) => ({ lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' })[e]);

/** Every object of the bucket whose key starts with `prefix`, sorted by key (the directory of its last full segment, walked). */
async function objectsUnder(bucket, prefix) {
  const segments = prefix.split('/');
  segments.pop();
  const start = path.join(bucketPath(bucket), ...segments.map((s) => segmentName('d', s)));
  const found = [];
  async function walk(dir) {
    let entries;
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return;
      throw err;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.name.startsWith('f') && !entry.name.endsWith('.part')) {
        const object = await readObject(full, true);
        if (!object?.header.key.startsWith(prefix)) continue;
        const { mtimeMs } = await fs.stat(full).catch(() => ({ mtimeMs: 0 }));
        found.push({ ...object.header, mtimeMs });
      }
    }
  }
  await walk(start);
  return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

async function listObjects(res, bucket, params) {
  await bucketMustExist(bucket);
  const prefix = params.get('prefix') ?? '';
  const delimiter = params.get('delimiter') ?? '';
  const maxKeys = Math.min(1000, Number(params.get('max-keys') ?? 1000) || 1000);
  const after = params.get('continuation-token') || params.get('start-after') || '';
  const urlEncoded = params.get('encoding-type') === 'url';
  const show = (s) => xmlEscape(urlEncoded ? encodeURIComponent(s) : s);
  const contents = [];
  const prefixes = new Set();
  let truncated = false;
  let last = '';
  for (const object of await objectsUnder(bucket, prefix)) {
    if (object.key <= after) continue;
    const rest = object.key.slice(prefix.length);
    const cut = delimiter ? rest.indexOf(delimiter) : -1;
    const common = cut >= 0 ? prefix + rest.slice(0, cut + delimiter.length) : undefined;
    if (common !== undefined && prefixes.has(common)) continue;
    if (contents.length + prefixes.size >= maxKeys) {
      truncated = true;
      break;
    }
    last = object.key;
    if (common !== undefined) prefixes.add(common);
    else contents.push(object);
  }
  const body = [
    `<ListBucketResult xmlns="${XMLNS}"><Name>${xmlEscape(bucket)}</Name><Prefix>${show(prefix)}</Prefix>`,
    `<KeyCount>${contents.length + prefixes.size}</KeyCount><MaxKeys>${maxKeys}</MaxKeys><Delimiter>${show(delimiter)}</Delimiter>`,
    `<IsTruncated>${truncated}</IsTruncated>${truncated ? `<NextContinuationToken>${xmlEscape(last)}</NextContinuationToken>` : ''}`,
    urlEncoded ? '<EncodingType>url</EncodingType>' : '',
    ...contents.map(
      (o) =>
        `<Contents><Key>${show(o.key)}</Key><LastModified>${new Date(o.mtimeMs).toISOString()}</LastModified><ETag>&quot;${o.etag}&quot;</ETag><Size>${o.size}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
    ),
    ...[...prefixes].map((p) => `<CommonPrefixes><Prefix>${show(p)}</Prefix></CommonPrefixes>`),
    '</ListBucketResult>',
  ].join('');
  sendXml(res, 200, body);
}

async function listBuckets(res) {
  const entries = await fs.readdir(root, { withFileTypes: true }).catch(() => []);
  const buckets = entries.filter((e) => e.isDirectory() && BUCKET_NAME.test(e.name)).map((e) => e.name);
  const created = await Promise.all(
    buckets.map((name) =>
      fs.stat(path.join(root, name)).then(
        (s) => s.birthtime,
        () => new Date(0),
      ),
    ),
  );
  const owner = `<Owner><ID>${xmlEscape(accessKey)}</ID><DisplayName>${xmlEscape(accessKey)}</DisplayName></Owner>`;
  const list = buckets.map((name, i) => `<Bucket><Name>${name}</Name><CreationDate>${created[i].toISOString()}</CreationDate></Bucket>`).join('');
  sendXml(res, 200, `<ListAllMyBucketsResult xmlns="${XMLNS}">${owner}<Buckets>${list}</Buckets></ListAllMyBucketsResult>`);
}

async function bucketRequest(req, res, bucket, params, body) {
  const dir = bucketPath(bucket);
  switch (req.method) {
    case 'HEAD':
      await bucketMustExist(bucket);
      return void res.writeHead(200).end();
    case 'PUT':
      try {
        await fs.mkdir(dir, { recursive: false });
      } catch (err) {
        if (err.code === 'EEXIST') throw new S3Error(409, 'BucketAlreadyOwnedByYou', `bucket ${bucket} exists`);
        if (err.code !== 'ENOENT') throw err;
        await fs.mkdir(dir, { recursive: true });
      }
      return void res.writeHead(200, { location: `/${bucket}` }).end();
    case 'DELETE': {
      await bucketMustExist(bucket);
      if ((await objectsUnder(bucket, '')).length) throw new S3Error(409, 'BucketNotEmpty', `bucket ${bucket} is not empty`);
      await fs.rm(dir, { recursive: true, force: true });
      return void res.writeHead(204).end();
    }
    case 'POST':
      if (params.has('delete')) return deleteObjects(res, bucket, body);
      break;
    case 'GET':
      if (params.has('location')) {
        await bucketMustExist(bucket);
        return sendXml(res, 200, `<LocationConstraint xmlns="${XMLNS}"></LocationConstraint>`);
      }
      if (params.get('list-type') === '2') return listObjects(res, bucket, params);
      break;
  }
  throw new S3Error(501, 'NotImplemented', `${req.method} ${req.url} is not supported here`);
}

function sendXml(res, status, body) {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) }).end(xml);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new S3Error(400, 'EntityTooLarge', `bodies above ${MAX_BODY_BYTES} bytes are refused here`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function handle(req, res) {
  // The path is read as sent, never normalised: a key may hold `.` and `..` segments, and the signature covers
  // the path as the client wrote it.
  const at = req.url.indexOf('?');
  const rawPath = at < 0 ? req.url : req.url.slice(0, at);
  const rawQuery = at < 0 ? '' : req.url.slice(at + 1);
  const body = await readBody(req);
  checkSignature(req, rawPath, rawQuery, body);
  const [first, ...rest] = rawPath.slice(1).split('/');
  const bucket = decodeURIComponent(first);
  if (!bucket) {
    if (req.method === 'GET') return listBuckets(res);
    throw new S3Error(405, 'MethodNotAllowed', `${req.method} / is not allowed`);
  }
  const key = rest.map(decodeURIComponent).join('/');
  if (key === '') return bucketRequest(req, res, bucket, new URLSearchParams(rawQuery), body);
  bucketPath(bucket);
  switch (req.method) {
    case 'PUT':
      return putObject(req, res, bucket, key, body);
    case 'GET':
      return getObject(req, res, bucket, key, false);
    case 'HEAD':
      return getObject(req, res, bucket, key, true);
    case 'DELETE':
      return deleteObject(res, bucket, key);
  }
  throw new S3Error(501, 'NotImplemented', `${req.method} on an object is not supported here`);
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((err) => {
    const known = err instanceof S3Error;
    if (!known) console.error(`s3 server: ${req.method} ${req.url}: ${err.stack || err}`);
    const status = known ? err.status : 500;
    const code = known ? err.code : 'InternalError';
    if (res.headersSent) return void res.destroy();
    if (req.method === 'HEAD') return void res.writeHead(status, { 'x-amz-error-code': code }).end();
    sendXml(res, status, `<Error><Code>${code}</Code><Message>${xmlEscape(err.message)}</Message><Resource>${xmlEscape(req.url)}</Resource></Error>`);
  });
});
server.keepAliveTimeout = 65_000;

fs.mkdir(root, { recursive: true })
  .then(() => new Promise((resolve, reject) => server.once('error', reject).listen(port, host, resolve)))
  .then(
    () => console.log(`s3 server listening on http://${encodeURIComponent(accessKey)}:${encodeURIComponent(secretKey)}@${host}:${server.address().port}`),
    (err) => {
      console.error(`s3 server failed to start: ${err.message}`);
      process.exit(1);
    },
  );

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  // close() waits for open connections; a client holding one must not keep the process alive forever.
  setTimeout(() => process.exit(0), 5000).unref();
  server.closeIdleConnections();
  server.close(() => process.exit(0));
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
