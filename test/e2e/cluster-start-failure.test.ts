import { TestWeb } from '../web/test-web';
import { TestWebCluster } from '../support/test-web-cluster';

const alive = (pid: number | undefined) => {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * A cluster whose start fails gives its caller nothing to close: what it did start must be stopped by the
 * start itself, or the processes outlive the test file and jest's process does not exit after the run.
 */
describe('a test cluster that fails to start', () => {
  it('stops the S3 server and the services that did start before it fails', async () => {
    const web = await TestWeb.start({ hosts: 12, pagesPerHost: 8 });
    try {
      const cluster = new TestWebCluster(web);
      await expect(cluster.start({ services: ['control-plane', 'no-such-service'] })).rejects.toThrow(/no-such-service exited/);
      expect(cluster.services.map((s) => s.name)).toEqual(['control-plane']);
      expect(cluster.services.map((s) => s.process.exitCode ?? s.process.signalCode)).not.toContain(null);
      expect(cluster.s3Pid).toBeDefined();
      expect(alive(cluster.s3Pid)).toBe(false);
    } finally {
      await web.close();
    }
  }, 90_000);
});
