/**
 * Whether a fetched HTML page looks built by its scripts, so that only rendering shows its links and text:
 * no `<a href>` at all, at least one script, and an empty application root (`<div id="root"></div>`,
 * `id="app"`, `id="__next"`…) or a body holding little but scripts. A cheap test on the raw HTML (no
 * parse): it decides which pages are worth a browser, a wrong "no" costs the page's script-made links.
 */
const APP_ROOT = /<(div|main|section|app-root)\b[^>]*\bid\s*=\s*["']?(root|app|__next|__nuxt|main|application)["']?[^>]*>\s*<\/\1>/i;
const SCRIPT = /<script\b[^>]*>/gi;
const LINK = /<a\b[^>]*\bhref\s*=/i;
const BODY = /<body\b[^>]*>([\s\S]*?)(<\/body>|$)/i;
/** Visible text below this many characters (scripts and tags aside) counts as an empty body. */
const EMPTY_BODY_CHARS = 40;

export function looksScriptBuilt(html: string): boolean {
  const scripts = html.match(SCRIPT)?.length ?? 0;
  if (scripts === 0) return false;
  // Markup inside a script (a template it writes) is not the page's own.
  const markup = html.replace(/<script\b[\s\S]*?<\/script>/gi, '<script></script>');
  if (LINK.test(markup)) return false;
  if (APP_ROOT.test(markup)) return true;
  const body = BODY.exec(markup)?.[1] ?? '';
  const text = body
    .replace(/<script\b[\s\S]*?<\/script>/gi, '')
    .replace(/<style\b[\s\S]*?<\/style>/gi, '')
    .replace(/<noscript\b[\s\S]*?<\/noscript>/gi, '')
    .replace(/<[^>]*>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length < EMPTY_BODY_CHARS;
}
