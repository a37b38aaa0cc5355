import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { assertRange, assertValidKey, assertValidMeta, assertValidPrefix } from './content-key';
import type { ContentStore, StoredObject } from './content-store';

/** Times a write retries after losing a race with the pruning of an emptied directory. */
const MAX_PRUNE_RACES = 20;

/**
 * A local directory (embedded mode). Layout under `root`:
 *   objects/<key>   the body, byte for byte
 *   meta/<key>      its metadata as JSON (a separate tree of the same shape, so list() sees only bodies and
 *                   no key name is reserved)
 *   tmp/            files being written; each is renamed into place, so readers never see a partial file
 *
 * Body and metadata are each replaced atomically, not together: metadata is renamed first, so a crash
 * mid-put leaves either no object or an old body with new metadata. Nothing is fsynced: writes survive a
 * process crash, not necessarily a power cut.
 *
 * Unlike S3, a key cannot be both an object and a "directory" ('a' and 'a/b'); putting the second fails.
 */
export class FsContentStore implements ContentStore {
  readonly root: string;
  private readonly objects: string;
  private readonly metas: string;
  private readonly tmp: string;
  /** tmp/ is made once (and again if a write finds it gone). */
  private tmpReady?: Promise<void>;

  constructor(root: string) {
    this.root = path.resolve(root);
    this.objects = path.join(this.root, 'objects');
    this.metas = path.join(this.root, 'meta');
    this.tmp = path.join(this.root, 'tmp');
  }

  async put(key: string, body: Buffer, meta: Record<string, string> = {}): Promise<void> {
    assertValidKey(key);
    assertValidMeta(meta);
    try {
      await this.writeAtomic(this.pathIn(this.metas, key), JSON.stringify(meta));
      await this.writeAtomic(this.pathIn(this.objects, key), body);
    } catch (err) {
      const code = codeOf(err);
      const hint = code === 'ENOTDIR' || code === 'EISDIR' || code === 'EEXIST' || code === 'ENOTEMPTY' ? ' (this directory store cannot hold both "a" and "a/b")' : '';
      throw new Error(`content store: put ${key} failed${hint}: ${(err as Error).message}`, { cause: err });
    }
  }

  async get(key: string): Promise<StoredObject | null> {
    assertValidKey(key);
    let body: Buffer;
    try {
      body = await fs.readFile(this.pathIn(this.objects, key));
    } catch (err) {
      if (isMissing(err)) return null;
      throw new Error(`content store: get ${key} failed: ${(err as Error).message}`, { cause: err });
    }
    return { body, meta: await this.readMeta(key) };
  }

  async getRange(key: string, offset: number, length: number): Promise<Buffer | null> {
    assertValidKey(key);
    assertRange(offset, length);
    let file;
    try {
      file = await fs.open(this.pathIn(this.objects, key), 'r');
    } catch (err) {
      if (isMissing(err)) return null;
      throw new Error(`content store: get ${key} failed: ${(err as Error).message}`, { cause: err });
    }
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await file.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  }

  async exists(key: string): Promise<boolean> {
    assertValidKey(key);
    try {
      return (await fs.stat(this.pathIn(this.objects, key))).isFile();
    } catch (err) {
      if (isMissing(err)) return false;
      throw new Error(`content store: exists ${key} failed: ${(err as Error).message}`, { cause: err });
    }
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    // Body first: the key disappears in one step; a leftover metadata file is invisible and overwritten later.
    for (const tree of [this.objects, this.metas]) {
      const file = this.pathIn(tree, key);
      try {
        await fs.unlink(file);
      } catch (err) {
        // A directory at that path ('a' while 'a/b' exists) means there is no object 'a' (macOS says EPERM).
        const isDir =
          codeOf(err) === 'EPERM' &&
          (await fs.stat(file).then(
            (s) => s.isDirectory(),
            () => false,
          ));
        if (!isMissing(err) && !isDir) {
          throw new Error(`content store: delete ${key} failed: ${(err as Error).message}`, { cause: err });
        }
      }
      await pruneEmptyDirs(path.dirname(file), tree);
    }
  }

  async *list(prefix: string): AsyncIterable<string> {
    assertValidPrefix(prefix);
    // Only the directory part of the prefix is walked; its last segment may be partial ('a/b' matches 'a/bc').
    const dirPart = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const start = dirPart ? this.pathIn(this.objects, dirPart) : this.objects;
    for await (const key of walk(start, dirPart)) {
      if (key.startsWith(prefix)) yield key;
    }
  }

  async ping(): Promise<void> {
    const probe = path.join(this.tmp, `ping-${randomUUID()}`);
    try {
      await fs.mkdir(this.tmp, { recursive: true });
      await fs.writeFile(probe, '');
      await fs.rm(probe);
    } catch (err) {
      throw new Error(`content store: directory ${this.root} is not writable: ${(err as Error).message}`, { cause: err });
    }
  }

  private async readMeta(key: string): Promise<Record<string, string>> {
    try {
      return JSON.parse(await fs.readFile(this.pathIn(this.metas, key), 'utf8')) as Record<string, string>;
    } catch (err) {
      if (isMissing(err)) return {}; // a body put by hand, or a put interrupted before its metadata
      throw new Error(`content store: metadata of ${key} is unreadable: ${(err as Error).message}`, { cause: err });
    }
  }

  private async writeAtomic(target: string, data: Buffer | string): Promise<void> {
    this.tmpReady ??= fs.mkdir(this.tmp, { recursive: true }).then(
      () => undefined,
      (err) => {
        this.tmpReady = undefined;
        throw err;
      },
    );
    await this.tmpReady;
    const temp = path.join(this.tmp, randomUUID());
    await fs.writeFile(temp, data).catch(async (err) => {
      if (codeOf(err) !== 'ENOENT') throw err;
      await fs.mkdir(this.tmp, { recursive: true });
      await fs.writeFile(temp, data);
    });
    try {
      // The parent directory usually exists: rename first, and make it only when the rename says it is
      // missing. A concurrent delete may prune it between our mkdir and rename (or during a recursive mkdir,
      // which then fails with ENOENT): both steps are retried until they stick.
      for (let attempt = 0; ; attempt++) {
        try {
          if (attempt > 0) await fs.mkdir(path.dirname(target), { recursive: true });
          await fs.rename(temp, target);
          return;
        } catch (err) {
          if (codeOf(err) !== 'ENOENT' || attempt >= MAX_PRUNE_RACES) throw err;
        }
      }
    } catch (err) {
      await fs.rm(temp, { force: true });
      throw err;
    }
  }

  /** `tree/key`, with a final check that validation really kept it inside the tree. */
  private pathIn(tree: string, key: string): string {
    const full = path.resolve(tree, key);
    if (!full.startsWith(tree + path.sep)) throw new Error(`content store: key ${JSON.stringify(key)} escapes the store`);
    return full;
  }
}

async function* walk(dir: string, keyPrefix: string): AsyncIterable<string> {
  let entries;
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (isMissing(err)) return;
    throw new Error(`content store: list ${dir} failed: ${(err as Error).message}`, { cause: err });
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const key = keyPrefix ? `${keyPrefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) yield* walk(path.join(dir, entry.name), key);
    else if (entry.isFile()) yield key;
  }
}

/** Removes now-empty parents up to (not including) `stop`, so a deleted 'a/b' does not block a later put of 'a'. */
async function pruneEmptyDirs(dir: string, stop: string): Promise<void> {
  while (dir !== stop && dir.startsWith(stop + path.sep)) {
    try {
      await fs.rmdir(dir);
    } catch {
      return; // not empty (or already gone, or in use by a concurrent put): stop pruning
    }
    dir = path.dirname(dir);
  }
}

function codeOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** ENOTDIR/EISDIR: the path runs through a file, or names a directory; either way there is no such object. */
function isMissing(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}
