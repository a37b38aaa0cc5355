/**
 * The ceiling, one process of it: fetch a list of pages with undici's `request` and pull their links out
 * with htmlparser2's SAX parser, resolved to absolute URLs, and nothing else — no frontier, no storage, no
 * dedup, no robots.txt. What the machine can do at best; a crawler is measured as a fraction of it. Like
 * the crawlers it keeps one request in flight per host (hosts take turns), which costs it nothing here:
 * there are more hosts than requests in flight.
 *
 * argv[2]: a JSON file { urls, hosts: { name: ip }, concurrency }. Prints JSON { pages, links, errors } when done.
 */
import { readFileSync } from 'node:fs';
import { Parser } from 'htmlparser2';
import { Agent, request } from 'undici';
import { hostsLookup } from '../web/hosts-lookup';

interface CeilingJob {
  urls: string[];
  hosts: Record<string, string>;
  concurrency: number;
}

async function main() {
  const job = JSON.parse(readFileSync(process.argv[2], 'utf8')) as CeilingJob;
  const dispatcher = new Agent({
    connections: 4,
    pipelining: 1,
    connect: { lookup: hostsLookup(job.hosts) },
  });
  const byHost = new Map<string, string[]>();
  for (const url of job.urls) {
    const host = new URL(url).host;
    const queue = byHost.get(host);
    if (queue) queue.push(url);
    else byHost.set(host, [url]);
  }
  const ready = [...byHost.values()];
  let pages = 0;
  let links = 0;
  let errors = 0;
  const worker = async () => {
    for (let queue = ready.shift(); queue; queue = ready.shift()) {
      const url = queue.shift()!;
      try {
        const { statusCode, body } = await request(url, { dispatcher, headers: { 'user-agent': 'ceiling-bench' } });
        const chunks: Buffer[] = [];
        for await (const chunk of body) chunks.push(chunk as Buffer);
        if (statusCode !== 200) continue;
        links += extractLinks(Buffer.concat(chunks).toString('utf8'), url);
        pages++;
      } catch {
        errors++;
      }
      if (queue.length) ready.push(queue);
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, worker));
  await dispatcher.close();
  process.stdout.write(`${JSON.stringify({ pages, links, errors })}\n`);
}

function extractLinks(html: string, base: string): number {
  let n = 0;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name !== 'a' || !attributes.href) return;
        try {
          new URL(attributes.href, base);
          n++;
        } catch {
          // not a URL
        }
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return n;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
