import { z } from 'zod';
import { pluginConfig } from '@crawler/plugin-sdk';

/** A regular expression of PLUGIN_MONITOR_PATTERNS, compiled once at boot (flags `iu`: case-insensitive, Unicode). */
export const PATTERN_FLAGS = 'iu';

/** `a, b ,c` → `['a', 'b', 'c']`, empty items dropped. */
const terms = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().max(200, 'each term at most 200 characters')));

/**
 * A JSON array of regular expressions (`["acme\\s*corp", "ACME-\\d+"]`), or one per line. Each must compile
 * (flags `iu`) and must not match the empty string (`a*` would alert on every page): a bad one stops the
 * process at boot, named with the compiler's complaint.
 */
const patterns = z.string().transform((value, ctx) => {
  let sources: unknown;
  if (value.trim().startsWith('[')) {
    try {
      sources = JSON.parse(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `not a JSON array of regular expressions (${(error as Error).message})` });
      return z.NEVER;
    }
    if (!Array.isArray(sources) || !sources.every((s) => typeof s === 'string')) {
      ctx.addIssue({ code: 'custom', message: 'a JSON array must hold only strings (regular expressions)' });
      return z.NEVER;
    }
  } else {
    sources = value.split('\n');
  }
  const compiled: RegExp[] = [];
  for (const source of (sources as string[]).map((s) => s.trim()).filter(Boolean)) {
    let regex: RegExp;
    try {
      regex = new RegExp(source, PATTERN_FLAGS);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `invalid regular expression /${source}/: ${(error as Error).message}` });
      continue;
    }
    if (regex.test('')) {
      ctx.addIssue({ code: 'custom', message: `regular expression /${source}/ matches the empty string, so it would match every page` });
      continue;
    }
    compiled.push(regex);
  }
  return compiled;
});

/** The web monitor's settings (documented in docs/configuration.md, "Plugin settings"). */
export const MonitorConfigSchema = z.object({
  /**
   * Words or phrases watched for, comma-separated (`Acme,Acme Corp`): case-insensitive, whole words only (a letter or
   * digit of any script right before or after means a longer word, not a match).
   * @defaultValue no terms
   */
  terms: terms.default([]).meta({ env: 'PLUGIN_MONITOR_TERMS' }),
  /**
   * Regular expressions watched for (JavaScript syntax, flags `iu`): a JSON array (`["acme\\s*corp","ACME-\\d+"]`) or
   * one per line. One that does not compile, or that matches the empty string, stops the process at boot, named. An
   * alert's `term` is the pattern's source.
   * @defaultValue no patterns
   */
  patterns: patterns.default([]).meta({ env: 'PLUGIN_MONITOR_PATTERNS' }),
  /**
   * Each alert is appended to this file as one JSON line (directories created).
   * @defaultValue <CRAWLER_DATA_DIR>/plugin-monitor/alerts.jsonl
   */
  jsonlFile: z.string().min(1).optional().meta({ env: 'PLUGIN_MONITOR_JSONL_FILE' }),
  /**
   * Each alert is POSTed to this http(s) URL as JSON; a failure or non-2xx answer fails the job, which is retried
   * (without repeating the JSONL line or the event). Unset: no webhook.
   * @defaultValue no webhook
   */
  webhookUrl: z
    .string()
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'must be an http:// or https:// URL')
    .optional()
    .meta({ env: 'PLUGIN_MONITOR_WEBHOOK_URL' }),
  /** A webhook call not answered within this many ms fails (and is retried). @defaultValue 10000 */
  webhookTimeoutMs: z.coerce.number().int().min(100).max(600_000).default(10_000).meta({ env: 'PLUGIN_MONITOR_WEBHOOK_TIMEOUT_MS' }),
});
export type MonitorConfig = z.infer<typeof MonitorConfigSchema>;

export const MONITOR_CONFIG = pluginConfig(MonitorConfigSchema);
