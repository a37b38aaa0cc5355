import type { ScaleWebProcess } from '../web/scale-web-process';
import type { ResumeFigures } from './scale-sample';
import { describeSample, type ScaleSampler } from './scale-sampler';

/** How often the run looks whether the crawl ended (and whether the kill is due). */
const TICK_MS = 1000;

export interface WatchOptions {
  sampleMs: number;
  timeoutMs: number;
  /** Whether the crawl has ended (complete, or its process exited). */
  ended(): Promise<boolean>;
  /** SCALE_KILL_AT: kill every crawler process once this share of the pages is fetched, then start them again. */
  killAt?: number;
  /** Kills (SIGKILL) every crawler process and starts them again; answers the URLs that were in flight. */
  killAndRestart?(): Promise<{ inFlight: number }>;
  log(line: string): void;
  /** Ends the watch early (the run was interrupted): the crawl is left to the caller to stop. */
  stop?: AbortSignal;
}

/**
 * Samples a crawl every `sampleMs` until it ends, times out or is stopped, killing and restarting its processes
 * once at `killAt` when asked. Answers whether it ended, and how the crawl came back from the kill.
 */
export async function watchCrawl(web: ScaleWebProcess, sampler: ScaleSampler, options: WatchOptions): Promise<{ ended: boolean; resume?: ResumeFigures }> {
  const reachable = web.reachablePages;
  await sampler.sample();
  let nextSampleAt = options.sampleMs / 1000;
  let resume: ResumeFigures | undefined;
  let killSeconds = 0;
  let ended = false;
  for (;;) {
    await new Promise((r) => setTimeout(r, Math.min(TICK_MS, options.sampleMs)));
    if (options.stop?.aborted) break;
    if (await options.ended()) {
      ended = true;
      break;
    }
    if (sampler.seconds() * 1000 > options.timeoutMs) break;
    if (options.killAt !== undefined && options.killAndRestart && !resume && (await web.observe()).pagesFetched >= options.killAt * reachable) {
      const atKill = await sampler.sample();
      options.log(describeSample(atKill, reachable));
      // The last full interval's rate, before the kill (the one ending at the kill may be short).
      const full = sampler.samples.length >= 3 ? sampler.samples[sampler.samples.length - 2] : atKill;
      killSeconds = sampler.seconds();
      const { inFlight } = await options.killAndRestart();
      const restartSeconds = sampler.seconds() - killSeconds;
      options.log(`killed every crawler process at ${atKill.pagesFetched} pages (${inFlight} URLs in flight); started again in ${restartSeconds.toFixed(1)} s`);
      resume = {
        killedAt: options.killAt,
        pagesAtKill: atKill.pagesFetched,
        inFlightAtKill: inFlight,
        rateBeforeKill: full.pagesPerSecond,
        secondsToFullSpeed: null,
        restartSeconds: Math.round(restartSeconds * 10) / 10,
      };
      nextSampleAt = sampler.seconds() + options.sampleMs / 1000;
      continue;
    }
    if (sampler.seconds() >= nextSampleAt) {
      const s = await sampler.sample();
      options.log(describeSample(s, reachable));
      nextSampleAt += options.sampleMs / 1000;
      if (resume && resume.secondsToFullSpeed === null && s.seconds > killSeconds && s.pagesPerSecond >= 0.9 * resume.rateBeforeKill) {
        resume.secondsToFullSpeed = Math.round(s.seconds - killSeconds);
      }
    }
  }
  const last = await sampler.sample();
  options.log(describeSample(last, reachable));
  return { ended, ...(resume ? { resume } : {}) };
}
