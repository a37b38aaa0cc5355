import { isIP } from 'node:net';
import { z } from 'zod';

/** An environment variable's spellings of yes and no, or a flag's boolean. */
export const bool = z.union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no'])]).transform((v) => v === true || v === 'true' || v === '1' || v === 'yes');
export const int = (min: number) => z.coerce.number().int().min(min);
export const ms = int(0);

/** `ADDRESS/PREFIX` with a prefix the address's family allows. */
export function isCidr(text: string): boolean {
  const [ip, prefix, ...rest] = text.split('/');
  const family = isIP(ip);
  return family !== 0 && rest.length === 0 && /^\d{1,3}$/.test(prefix ?? '') && +prefix <= (family === 4 ? 32 : 128);
}

/** A comma-separated list (or an array, from flags) whose every entry passes `valid`; the error names the bad entries. */
export const checkedList = (valid: (entry: string) => boolean, problem: string) =>
  z.preprocess(
    (v) =>
      typeof v === 'string'
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : v,
    z.array(z.string()).superRefine((entries, ctx) => {
      for (const entry of entries) if (!valid(entry)) ctx.addIssue({ code: 'custom', message: `"${entry}" ${problem}` });
    }),
  );
