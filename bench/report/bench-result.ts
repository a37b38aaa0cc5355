import type { MicroBenchmark } from './results';

/** One figure a micro-benchmark measured; whoever runs the script knows the command and adds it. */
export type BenchFigure = Omit<MicroBenchmark, 'command'>;

/**
 * Ends a micro-benchmark's output with one line a harness can find after the Markdown tables:
 * `BENCH_RESULT {"id":…,"figures":[…]}`. A figure that is not a finite number would become `null` in JSON
 * and pass for a measurement, so it stops the script instead.
 */
export function printBenchResult(id: string, figures: BenchFigure[]): void {
  const bad = figures.filter((f) => !Number.isFinite(f.value));
  if (bad.length) throw new Error(`${id}: figures without a finite value: ${bad.map((f) => `${f.id} = ${f.value}`).join(', ')}`);
  const rounded = figures.map((f) => ({ ...f, value: Number(f.value.toPrecision(6)) }));
  console.log(`BENCH_RESULT ${JSON.stringify({ id, figures: rounded })}`);
}
