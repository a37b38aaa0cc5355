import { loadConfig } from './crawler-config';
import { ownPorts, portRules } from './own-ports';

describe('ownPorts', () => {
  it("is every port the crawler's own infrastructure and HTTP server listen on", () => {
    const config = loadConfig({
      REDIS_URL: 'redis+cluster://10.0.0.5:7000,10.0.0.6:7001',
      S3_URL: 'http://KEY:SECRET@minio:9199',
      RECORDS_URL: 'postgres://postgres@db/crawl',
      PORT: '3100',
    });
    expect(ownPorts(config)).toEqual([3100, 5432, 7000, 7001, 9199, 17000, 17001]);
  });

  it("takes a single node's Redis port, default 6379, and no HTTP port when the process serves none", () => {
    expect(ownPorts(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6390/2', PORT: '0' }))).toEqual([6390]);
    expect(ownPorts(loadConfig({ REDIS_URL: 'redis://redis', PORT: '0' }))).toEqual([6379]);
  });

  it('never counts 80 or 443 as its own: an S3 endpoint there does not close the web', () => {
    expect(ownPorts(loadConfig({ S3_URL: 'https://KEY:SECRET@s3.example.com', PORT: '0' }))).toEqual([]);
  });

  it('goes into the port rules with the URL filter settings', () => {
    const rules = portRules(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6390', URL_FILTER_BLOCKED_PORTS: '8081', PORT: '0' }));
    expect(rules).toEqual({ allowed: ['80', '443', '1024-65535'], blocked: ['8081'], own: [6390] });
  });
});
