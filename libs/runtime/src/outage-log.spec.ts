import { Writable } from 'node:stream';
import pino from 'pino';
import { OutageLog } from './outage-log';

describe('OutageLog', () => {
  let t = 0;
  beforeEach(() => {
    t = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => t);
  });
  afterEach(() => jest.restoreAllMocks());

  function logged() {
    const lines: any[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(chunk.toString())), done()) });
    return { lines, log: new OutageLog(pino({ base: null, timestamp: false }, sink), 60_000) };
  }

  it('logs an outage once when it starts, a reminder a minute at most, and once when it ends', async () => {
    const { lines, log } = logged();
    // A thousand failures in two and a half minutes: reconnect attempts, failed jobs.
    for (let i = 0; i < 1000; i++) {
      log.down('redis', { error: 'connect ECONNREFUSED' }, 'redis unavailable');
      t += 150;
    }
    expect(log.since('redis')).toBe(1_000_000);
    log.up('redis', {}, 'redis is back');
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => l.event)).toEqual(['outage-start', 'outage-continues', 'outage-continues', 'outage-end']);
    expect(lines[1]).toMatchObject({ outage: 'redis', failuresSinceLastLine: 400, since: new Date(1_000_000).toISOString() });
    expect(lines[3]).toMatchObject({ outage: 'redis', durationMs: 150_000 });
    expect(log.since('redis')).toBeUndefined();
    // Up when it was never down says nothing; the next outage is a new one.
    log.up('s3', {}, 's3 is back');
    log.down('redis', {}, 'redis unavailable');
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => l.event)).toEqual(['outage-start', 'outage-continues', 'outage-continues', 'outage-end', 'outage-start']);
  });
});
