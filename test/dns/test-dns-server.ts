import { createSocket, RemoteInfo, Socket } from 'node:dgram';
import { isIP } from 'node:net';

/** One name's answer: an IPv4 address answers A queries, an IPv6 address AAAA queries. */
export interface TestDnsRecord {
  address: string;
  /** Seconds. */
  ttl: number;
}

export interface TestDnsQuery {
  name: string;
  type: 'A' | 'AAAA' | number;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;
const CLASS_IN = 1;
const RCODE_FORMERR = 1;
const RCODE_NXDOMAIN = 3;
const RCODE_NOTIMP = 4;

/**
 * A UDP DNS responder on 127.0.0.1 for tests (RFC 1035 message format). It answers A and AAAA queries from
 * a mutable map, NXDOMAIN for names it does not know, NOERROR with no answer (NODATA) for a known name
 * asked for the other family; it counts the queries it gets per name and can hold its answers back.
 */
export class TestDnsServer {
  /** Lower-case name → answer; change it between lookups to make the server's answer change. */
  readonly records = new Map<string, TestDnsRecord>();
  /** Every query received, in order. */
  readonly log: TestDnsQuery[] = [];
  /** Answers are sent this long after the query arrives. */
  delayMs = 0;

  private readonly socket: Socket = createSocket('udp4');
  private readonly timers = new Set<NodeJS.Timeout>();
  private boundPort = 0;

  /** Starts listening on 127.0.0.1 at a free port. */
  static async start(records: Record<string, TestDnsRecord> = {}): Promise<TestDnsServer> {
    const server = new TestDnsServer();
    for (const [name, record] of Object.entries(records)) server.set(name, record.address, record.ttl);
    await new Promise<void>((resolve, reject) => {
      server.socket.once('error', reject);
      server.socket.bind(0, '127.0.0.1', () => {
        server.socket.off('error', reject);
        resolve();
      });
    });
    server.boundPort = server.socket.address().port;
    server.socket.on('message', (message, peer) => server.receive(message, peer));
    return server;
  }

  get port(): number {
    return this.boundPort;
  }

  /** The `DNS_SERVERS` value that points a resolver here. */
  get address(): string {
    return `127.0.0.1:${this.boundPort}`;
  }

  set(name: string, address: string, ttl: number): void {
    if (!isIP(address)) throw new Error(`not an IP address: ${address}`);
    this.records.set(name.toLowerCase(), { address, ttl });
  }

  delete(name: string): void {
    this.records.delete(name.toLowerCase());
  }

  /** Lookups of a name: the A queries received for it. */
  queries(name: string): number {
    // A lookup asks for A records first, then AAAA (or AAAA alone after NODATA): its A query counts it.
    return this.log.filter((query) => query.name === name.toLowerCase() && query.type === 'A').length;
  }

  /** Resolves once `count` queries in all have arrived. */
  async waitForQueries(count: number, timeoutMs = 5000): Promise<void> {
    // performance.now, not Date.now: tests may freeze Date.now to drive cache expiry.
    const deadline = performance.now() + timeoutMs;
    while (this.log.length < count) {
      if (performance.now() > deadline) throw new Error(`expected ${count} DNS queries, got ${this.log.length}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }

  private receive(message: Buffer, peer: RemoteInfo): void {
    const response = this.answer(message);
    if (!response) return;
    const send = () => this.socket.send(response, peer.port, peer.address);
    if (this.delayMs <= 0) {
      send();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      send();
    }, this.delayMs);
    this.timers.add(timer);
  }

  /** The response to one query message; undefined for what is not a query (it is dropped). */
  private answer(query: Buffer): Buffer | undefined {
    if (query.length < 12) return undefined;
    const flags = query.readUInt16BE(2);
    if (flags & 0x8000) return undefined; // a response, not a query
    const opcode = (flags >> 11) & 0x0f;
    const question = opcode === 0 && query.readUInt16BE(4) === 1 ? readQuestion(query, 12) : undefined;
    if (!question) return header(query, flags, opcode === 0 ? RCODE_FORMERR : RCODE_NOTIMP, 0);

    const { name, type, qclass, end } = question;
    this.log.push({ name, type: type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : type });
    // The question is echoed byte for byte (a resolver may randomise the name's case and check it).
    const echoed = query.subarray(12, end);
    const record = this.records.get(name);
    if (!record) return Buffer.concat([header(query, flags, RCODE_NXDOMAIN, 0), echoed]);
    const family = isIP(record.address);
    const matches = qclass === CLASS_IN && ((type === TYPE_A && family === 4) || (type === TYPE_AAAA && family === 6));
    if (!matches) return Buffer.concat([header(query, flags, 0, 0), echoed]);

    const rdata = family === 4 ? Buffer.from(record.address.split('.').map(Number)) : ipv6Bytes(record.address);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc000 | 12, 0); // pointer to the question's name, at offset 12
    rr.writeUInt16BE(type, 2);
    rr.writeUInt16BE(CLASS_IN, 4);
    rr.writeUInt32BE(record.ttl >>> 0, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([header(query, flags, 0, 1), echoed, rr, rdata]);
  }
}

/** A response header: the query's id, QR, AA and RA set, its opcode and RD copied; one question echoed unless FORMERR/NOTIMP. */
function header(query: Buffer, queryFlags: number, rcode: number, answers: number): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt16BE(query.readUInt16BE(0), 0);
  out.writeUInt16BE(0x8000 | (queryFlags & 0x7800) | 0x0400 | (queryFlags & 0x0100) | 0x0080 | rcode, 2);
  out.writeUInt16BE(rcode === RCODE_FORMERR || rcode === RCODE_NOTIMP ? 0 : 1, 4);
  out.writeUInt16BE(answers, 6);
  return out;
}

/** The question at `offset` (uncompressed labels, as queries carry them), or undefined when malformed. */
function readQuestion(message: Buffer, offset: number): { name: string; type: number; qclass: number; end: number } | undefined {
  const labels: string[] = [];
  let at = offset;
  for (;;) {
    if (at >= message.length) return undefined;
    const length = message[at];
    if (length === 0) break;
    if (length > 63 || at + 1 + length > message.length) return undefined; // pointers and bad lengths
    labels.push(message.toString('latin1', at + 1, at + 1 + length));
    at += 1 + length;
  }
  at += 1;
  if (at + 4 > message.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: message.readUInt16BE(at), qclass: message.readUInt16BE(at + 2), end: at + 4 };
}

/** The 16 bytes of an IPv6 address (with `::` and an embedded IPv4 tail). */
function ipv6Bytes(address: string): Buffer {
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    text = `${text.slice(0, -v4[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  const out = Buffer.alloc(16);
  groups.forEach((group, i) => out.writeUInt16BE(parseInt(group, 16), i * 2));
  return out;
}
