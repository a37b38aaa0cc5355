import { PIPELINE_QUEUES, SERVICES } from '@crawler/contracts';
import { PIPELINE_STAGES } from './pipeline-stages';

describe('PIPELINE_STAGES', () => {
  it('draws every service of the map that consumes crawl work, once, in pipeline order', () => {
    const working = SERVICES.filter((s) => s.consumes.some((c) => PIPELINE_QUEUES.includes(c.queue))).map((s) => s.name);
    expect([...PIPELINE_STAGES.map((s) => s.id)].sort()).toEqual(working.sort());
    expect(PIPELINE_STAGES.map((s) => s.id)).toEqual([
      'url-filter',
      'url-seen',
      'frontier',
      'dns-resolver',
      'downloader',
      'content-parser',
      'content-seen',
      'url-extractor',
    ]);
  });

  it('reads each stage’s depth from the queue leading into it', () => {
    expect(Object.fromEntries(PIPELINE_STAGES.map((s) => [s.id, s.queue]))).toEqual({
      'url-filter': 'filter-urls',
      'url-seen': 'seen-urls',
      frontier: 'frontier-add',
      'dns-resolver': 'dns-resolve',
      downloader: 'fetch',
      'content-parser': 'parse',
      'content-seen': 'content-seen',
      'url-extractor': 'extract-links',
    });
  });
});
