#!/usr/bin/env node
/**
 * The `mc` commands the Compose files run against the S3 stand-in but `ready` (which the `mc` bash script in
 * front of this one answers): `mc alias set NAME URL KEY SECRET` (kept in ~/.mc-aliases.json) and
 * `mc mb [--ignore-existing] NAME/BUCKET` (a Signature V4 signed PUT of the bucket).
 */
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const aliasFile = path.join(os.homedir(), '.mc-aliases.json');
const readAliases = () => (fs.existsSync(aliasFile) ? JSON.parse(fs.readFileSync(aliasFile, 'utf8')) : {});
const fail = (message, code = 1) => {
  console.error(`mc: ${message}`);
  process.exit(code);
};
const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex');
const hmac = (key, data) => crypto.createHmac('sha256', key).update(data).digest();

function request(url, method, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error('timed out')));
    req.end();
  });
}

function signedHeaders(alias, method, target) {
  const url = new URL(target, alias.url);
  const amzDate = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
  const day = amzDate.slice(0, 8);
  const region = 'us-east-1';
  const payloadHash = sha256('');
  const canonical = [
    method,
    url.pathname,
    '',
    `host:${url.host}`,
    `x-amz-content-sha256:${payloadHash}`,
    `x-amz-date:${amzDate}`,
    '',
    'host;x-amz-content-sha256;x-amz-date',
    payloadHash,
  ].join('\n');
  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  let key = hmac(`AWS4${alias.secret}`, day);
  for (const part of [region, 's3', 'aws4_request']) key = hmac(key, part);
  const signature = crypto.createHmac('sha256', key).update(toSign).digest('hex');
  return {
    url,
    headers: {
      'x-amz-date': amzDate,
      'x-amz-content-sha256': payloadHash,
      authorization: `AWS4-HMAC-SHA256 Credential=${alias.key}/${scope}, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=${signature}`,
    },
  };
}

async function main([command, ...args]) {
  if (command === 'alias' && args[0] === 'set' && args.length === 5) {
    const [, name, url, key, secret] = args;
    fs.writeFileSync(aliasFile, JSON.stringify({ ...readAliases(), [name]: { url, key, secret } }), { mode: 0o600 });
    return console.log(`Added \`${name}\` successfully.`);
  }
  if (command === 'mb') {
    const ignoreExisting = args.includes('--ignore-existing') || args.includes('-p');
    const target = args.find((arg) => !arg.startsWith('-'));
    const [name, bucket] = (target ?? '').split('/');
    const alias = readAliases()[name];
    if (!alias || !bucket) fail(`mb needs ALIAS/BUCKET with an alias set first, got ${JSON.stringify(target)}`, 64);
    const { url, headers } = signedHeaders(alias, 'PUT', `/${bucket}`);
    const { status, body } = await request(url, 'PUT', headers);
    if (status === 200) return console.log(`Bucket created successfully \`${target}\`.`);
    if (status === 409 && ignoreExisting) return console.log(`Bucket \`${target}\` already exists.`);
    fail(`making ${target} failed with HTTP ${status}: ${body}`);
  }
  fail(`this S3 stand-in's mc knows only: ready ALIAS (the mc script), alias set NAME URL KEY SECRET, mb [--ignore-existing] ALIAS/BUCKET`, 64);
}

main(process.argv.slice(2)).catch((error) => fail(error.message));
