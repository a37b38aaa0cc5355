import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';

/**
 * What this machine charges for crossing into its kernel, measured before the runs. A crawl shape that spreads
 * a page over more processes pays more of these: on a virtual machine that traps page faults and system calls
 * to its hypervisor they cost several times what they cost on hardware, and they drift with the host's load,
 * so a run's figures are read beside them.
 */
export interface MachineCosts {
  /** First touch of a 4 KiB page of fresh anonymous memory: the fault, the zeroing and the page-table write. */
  pageFaultUs: number;
  /** A 1-byte `read` of /dev/zero from Node: the system call and Node's binding around it. */
  readUs: number;
  /** One byte to a second Node process over a pipe and back: two wake-ups, four system calls, two event loops. */
  processRoundTripUs: number;
}

const PAGE = 4096;
const FAULT_BYTES = 64 * 2 ** 20;
const READS = 100_000;
const ROUND_TRIPS = 2000;

export async function measureMachineCosts(): Promise<MachineCosts> {
  return {
    pageFaultUs: median([1, 2, 3, 4, 5].map(pageFaultUs)),
    readUs: median([1, 2, 3].map(readUs)),
    processRoundTripUs: await processRoundTripUs(),
  };
}

function pageFaultUs(): number {
  // Past glibc's largest mmap threshold (32 MiB), so the memory is fresh from the kernel every time.
  const memory = Buffer.allocUnsafeSlow(FAULT_BYTES);
  const started = process.hrtime.bigint();
  for (let offset = 0; offset < FAULT_BYTES; offset += PAGE) memory[offset] = 1;
  return microsSince(started) / (FAULT_BYTES / PAGE);
}

function readUs(): number {
  const fd = openSync('/dev/zero', 'r');
  const byte = Buffer.alloc(1);
  try {
    const started = process.hrtime.bigint();
    for (let i = 0; i < READS; i++) readSync(fd, byte, 0, 1, null);
    return microsSince(started) / READS;
  } finally {
    closeSync(fd);
  }
}

async function processRoundTripUs(): Promise<number> {
  const echo = spawn(process.execPath, ['-e', 'process.stdin.on("data", (d) => process.stdout.write(d))'], { stdio: ['pipe', 'pipe', 'inherit'] });
  // One listener each for the whole run: a listener added per ping would pile up (Node warns past ten).
  let waiting: { resolve(): void; reject(error: Error): void } | undefined;
  echo.stdout.on('data', () => waiting?.resolve());
  echo.once('error', (error) => waiting?.reject(error));
  const ping = () =>
    new Promise<void>((resolve, reject) => {
      waiting = { resolve, reject };
      echo.stdin.write('x');
    });
  try {
    await ping(); // the child has started and answers
    const started = process.hrtime.bigint();
    for (let i = 0; i < ROUND_TRIPS; i++) await ping();
    return microsSince(started) / ROUND_TRIPS;
  } finally {
    echo.kill();
  }
}

function microsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e3;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}
