/**
 * File-extension blocklist of the URL Filter: skip URLs that are almost certainly not HTML before spending a
 * request on them. The extension is only a hint; the downloader still routes by Content-Type.
 */

/** Lower-case, without the dot. Images, media, archives, office documents, fonts, executables, assets. */
export const DEFAULT_BLOCKED_EXTENSIONS: ReadonlySet<string> = new Set([
  // images
  'png',
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'svg',
  'ico',
  'bmp',
  'tif',
  'tiff',
  'avif',
  'heic',
  // audio
  'mp3',
  'wav',
  'ogg',
  'flac',
  'm4a',
  'aac',
  // video
  'mp4',
  'avi',
  'mov',
  'mkv',
  'webm',
  'wmv',
  'flv',
  'm4v',
  'mpg',
  'mpeg',
  // archives and disk images
  'zip',
  'gz',
  'tgz',
  'bz2',
  'xz',
  '7z',
  'rar',
  'tar',
  'iso',
  'dmg',
  // documents
  'pdf',
  'doc',
  'docx',
  'xls',
  'xlsx',
  'ppt',
  'pptx',
  'odt',
  'ods',
  'odp',
  'rtf',
  // executables and packages
  'exe',
  'msi',
  'apk',
  'bin',
  'deb',
  'rpm',
  'jar',
  // fonts
  'woff',
  'woff2',
  'ttf',
  'otf',
  'eot',
  // page assets
  'css',
  'js',
  'mjs',
  'map',
]);

/** Normalises a configured list (`.PNG`, `png`) into the form the filter compares against. */
export function toExtensionSet(extensions: Iterable<string>): ReadonlySet<string> {
  return new Set([...extensions].map((e) => e.trim().replace(/^\./, '').toLowerCase()).filter((e) => e !== ''));
}

/**
 * The lower-cased extension of the URL's last path segment (`/a/Report.PDF` → `pdf`), or `null` if it
 * has none: no dot, a trailing slash (a directory), a dot-file (`/.well-known`), or an unparseable URL.
 * Path parameters (`/file.pdf;v=2`) and percent-escapes (`/file.%70df`) do not hide the extension.
 */
export function pathExtension(url: URL | string): string | null {
  let pathname: string;
  try {
    pathname = typeof url === 'string' ? new URL(url).pathname : url.pathname;
  } catch {
    return null;
  }
  let segment = pathname.slice(pathname.lastIndexOf('/') + 1).split(';')[0];
  try {
    segment = decodeURIComponent(segment);
  } catch {
    // a stray '%' is just a character here
  }
  const dot = segment.lastIndexOf('.');
  if (dot <= 0 || dot === segment.length - 1) return null;
  return segment.slice(dot + 1).toLowerCase();
}

/**
 * Whether the URL's extension is on the blocklist. Extensions a plugin claims (e.g. `png` for the PNG
 * downloader) are never blocked: the plugin wins over the list.
 */
export function isBlockedExtension(url: URL | string, blocked: ReadonlySet<string> = DEFAULT_BLOCKED_EXTENSIONS, claimed?: ReadonlySet<string>): boolean {
  const ext = pathExtension(url);
  if (ext === null || claimed?.has(ext)) return false;
  return blocked.has(ext);
}
