import { Client } from 'pg';
import { POSTGRES_URL } from '@crawler/records/testing';
import { PostgresMeter } from '../../bench/crawl/postgres-meter';

describe('PostgresMeter', () => {
  it('counts the CPU of a backend that works while it meters, opened after it started', async () => {
    const meter = new PostgresMeter();
    const client = new Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const started = performance.now();
      // A second of queries: most of it the backend's CPU, even on a busy machine.
      while (performance.now() - started < 1000) await client.query('SELECT sum(x) FROM generate_series(1, 200000) AS x');
    } finally {
      await client.end();
    }
    // The backend has exited by now: its last sample stands for it.
    expect(meter.stop()).toBeGreaterThan(100);
  });
});
