import { ContentStore, StoredPageMeta } from '@crawler/content-store';
import { collectKeys } from '@crawler/content-store/testing';

/**
 * The pages a crawl stored, read from the page store's segment indexes (`pages/…/*.index.jsonl`): URL → its
 * reference and metadata. A page stored twice (a message redelivered after a crash) counts once, as its URL.
 */
export async function storedPages(store: ContentStore): Promise<Map<string, { ref: string; meta: StoredPageMeta }>> {
  const pages = new Map<string, { ref: string; meta: StoredPageMeta }>();
  const keys = await collectKeys(store.list('pages/'));
  for (const key of keys) {
    if (!key.endsWith('.index.jsonl')) continue;
    // The segment beside its index: `.gz` or `.zst`, by the codec that wrote it.
    const base = key.replace(/\.index\.jsonl$/, '');
    const segment = keys.find((k) => k === `${base}.gz` || k === `${base}.zst`);
    if (!segment) throw new Error(`no segment beside ${key}`);
    for (const line of (await store.get(key))!.body.toString('utf8').split('\n')) {
      if (!line) continue;
      const { offset, length, meta } = JSON.parse(line) as { offset: number; length: number; meta: StoredPageMeta };
      pages.set(meta.url, { ref: `${segment}#${offset}.${length}`, meta });
    }
  }
  return pages;
}
