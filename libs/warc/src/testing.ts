import { createHash } from 'node:crypto';
import { WARCParser } from 'warcio';

/** One record as warcio reads it back. */
export interface ReadBackRecord {
  type: string;
  /** WARC-Target-URI (none on warcinfo). */
  uri: string | null;
  id: string;
  header(name: string): string | null;
  /** The HTTP status of a response or revisit. */
  status: number | null;
  /** The HTTP payload of a response (what follows its HTTP head); empty for the others. */
  payload: Buffer;
  /** The whole block: a request's HTTP head, a revisit's. */
  block: Buffer;
}

/**
 * Every record of a `.warc.gz`, read by warcio (the Webrecorder tools' reader) twice: once raw, to check each
 * WARC-Block-Digest against the block, once with the HTTP head parsed, to check a response's
 * WARC-Payload-Digest against its payload. A digest that does not match throws.
 */
export async function readWarcFile(bytes: Buffer): Promise<ReadBackRecord[]> {
  const blocks: Buffer[] = [];
  for await (const record of new WARCParser([bytes], { parseHttp: false })) blocks.push(Buffer.from(await record.readFully()));
  const out: ReadBackRecord[] = [];
  for await (const record of new WARCParser([bytes])) {
    const payload = Buffer.from(await record.readFully());
    const header = (name: string) => record.warcHeaders.headers.get(name) ?? null;
    const id = header('WARC-Record-ID')!;
    checkDigest(header('WARC-Block-Digest'), blocks[out.length], `block of ${id}`);
    if (record.warcType === 'response') checkDigest(header('WARC-Payload-Digest'), payload, `payload of ${id}`);
    const status = record.httpHeaders?.statusCode;
    out.push({
      type: record.warcType ?? '',
      uri: record.warcTargetURI ?? null,
      id,
      header,
      status: status === undefined ? null : Number(status),
      payload: record.warcType === 'response' ? payload : Buffer.alloc(0),
      block: blocks[out.length],
    });
  }
  if (out.length !== blocks.length) throw new Error(`warcio read ${blocks.length} records raw but ${out.length} parsed`);
  return out;
}

/**
 * What a replay tool relies on, as a list of problems (empty when all is well): every request record is
 * WARC-Concurrent-To exactly one response or revisit of the same URI, date and address, and every response
 * has its request; every revisit names the URI and date it refers to, and a record holding that payload.
 */
export function pairingProblems(records: readonly ReadBackRecord[]): string[] {
  const problems: string[] = [];
  const byId = new Map(records.map((r) => [r.id, r]));
  const answered = new Map<string, number>();
  for (const request of records.filter((r) => r.type === 'request')) {
    const answer = byId.get(request.header('WARC-Concurrent-To') ?? '');
    if (!answer || (answer.type !== 'response' && answer.type !== 'revisit')) {
      problems.push(`request ${request.id} (${request.uri}) is concurrent to no response`);
      continue;
    }
    answered.set(answer.id, (answered.get(answer.id) ?? 0) + 1);
    for (const field of ['WARC-Target-URI', 'WARC-Date', 'WARC-IP-Address']) {
      if (request.header(field) !== answer.header(field)) problems.push(`request ${request.id} and its response differ in ${field}`);
    }
  }
  for (const answer of records.filter((r) => r.type === 'response' || r.type === 'revisit')) {
    if (answered.get(answer.id) !== 1) problems.push(`${answer.type} ${answer.id} (${answer.uri}) has ${answered.get(answer.id) ?? 0} requests`);
  }
  for (const revisit of records.filter((r) => r.type === 'revisit')) {
    const uri = revisit.header('WARC-Refers-To-Target-URI');
    const date = revisit.header('WARC-Refers-To-Date');
    const original = byId.get(revisit.header('WARC-Refers-To') ?? '');
    if (!uri || !date) problems.push(`revisit ${revisit.id} lacks WARC-Refers-To-Target-URI or -Date`);
    else if (original && (original.uri !== uri || original.header('WARC-Date') !== date))
      problems.push(`revisit ${revisit.id} refers to ${uri} ${date}, not to its record's`);
    if (original && original.header('WARC-Payload-Digest') !== revisit.header('WARC-Payload-Digest'))
      problems.push(`revisit ${revisit.id} has another payload digest than its original`);
  }
  return problems;
}

function checkDigest(digest: string | null, data: Buffer, what: string): void {
  const expected = createHash('sha1').update(data).digest();
  if (!digest?.startsWith('sha1:') || !fromBase32(digest.slice(5)).equals(expected)) throw new Error(`warcio read a ${what} whose digest ${digest} does not match`);
}

/** RFC 4648 base32 decoding, written apart from the writer's encoder so that it checks it. */
function fromBase32(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const bits = [...text].map((c) => alphabet.indexOf(c).toString(2).padStart(5, '0')).join('');
  return Buffer.from((bits.match(/.{8}/g) ?? []).map((byte) => parseInt(byte, 2)));
}
