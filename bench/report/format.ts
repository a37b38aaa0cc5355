/** Numbers for people: thousands separators; no decimals on counts, and fewer the larger the number. */
export function num(n: number | null | undefined, digits?: number): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  const size = Math.abs(n);
  // Two significant digits below 0.1, where two decimals would round a small ratio to 0.00.
  if (digits === undefined && size > 0 && size < 0.1) return String(Number(n.toPrecision(2)));
  const d = digits ?? (Number.isInteger(n) || size >= 100 ? 0 : size >= 10 ? 1 : 2);
  return n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

export const mib = (bytes: number, digits?: number) => num(bytes / 2 ** 20, digits);
