import { writeFileSync } from 'node:fs';
import Module from 'node:module';

/**
 * Preloaded into a crawl or service process (`--require`, see ROOT_LOGGER_COUNTER): counts the root loggers
 * the process builds, every call of pino itself (a `.child()` is not one), and writes the count to
 * ROOT_LOGGER_COUNT_FILE as the process exits.
 */
type Load = (request: string, parent: unknown, isMain: boolean) => unknown;
type Pino = ((...args: unknown[]) => unknown) & Record<string, unknown>;

const loader = Module as unknown as { _load: Load };
const load = loader._load;
let counted: Pino | undefined;
let roots = 0;
loader._load = function (this: unknown, request, parent, isMain) {
  const exported = load.call(this, request, parent, isMain);
  if (request !== 'pino') return exported;
  if (!counted) {
    const pino = exported as Pino;
    counted = Object.assign((...args: unknown[]) => {
      roots++;
      return pino(...args);
    }, pino);
    // `import pino from 'pino'` compiles to the module's `default`.
    counted.default = counted;
    counted.pino = counted;
  }
  return counted;
};
process.once('exit', () => writeFileSync(process.env.ROOT_LOGGER_COUNT_FILE!, String(roots)));
