import { loadConfig } from '@crawler/config';
import { isLoopback, listenPlan } from './listen-address';

describe('listenPlan: where a service listens', () => {
  const plan = (env: Record<string, string>, controlApi = true) => listenPlan(loadConfig(env), controlApi);

  it('serves /health and /metrics of pipeline services on every interface, or BIND_ADDRESS', () => {
    expect(plan({}, false)).toEqual({ address: '0.0.0.0' });
    expect(plan({ BIND_ADDRESS: '10.0.0.5' }, false)).toEqual({ address: '10.0.0.5' });
  });

  it('puts a control plane without a token on loopback, and says so', () => {
    expect(plan({})).toEqual({ address: '127.0.0.1', notice: expect.stringMatching(/no CONTROL_PLANE_TOKEN: listening on 127\.0\.0\.1 only/) });
    expect(plan({ BIND_ADDRESS: '::1' }).address).toBe('::1');
  });

  it('refuses a control plane without a token anywhere else, unless explicitly allowed, and then warns', () => {
    expect(() => plan({ BIND_ADDRESS: '0.0.0.0' })).toThrow(/BIND_ADDRESS: a control plane without CONTROL_PLANE_TOKEN listens on loopback only \(got 0\.0\.0\.0\)/);
    expect(plan({ BIND_ADDRESS: '0.0.0.0', CONTROL_PLANE_ALLOW_UNAUTHENTICATED: 'true' })).toEqual({
      address: '0.0.0.0',
      notice: expect.stringMatching(/^UNAUTHENTICATED CONTROL PLANE on 0\.0\.0\.0/),
    });
  });

  it('puts a control plane with a token on every interface, or BIND_ADDRESS', () => {
    expect(plan({ CONTROL_PLANE_TOKEN: 'a'.repeat(32) })).toEqual({ address: '0.0.0.0' });
    expect(plan({ CONTROL_PLANE_TOKEN: 'a'.repeat(32), BIND_ADDRESS: '127.0.0.1' })).toEqual({ address: '127.0.0.1' });
  });

  it('refuses to start with the examples’ placeholder token, and says how to make one', () => {
    expect(() => plan({ CONTROL_PLANE_TOKEN: 'change-me-control-plane-token' })).toThrow(/still the placeholder of the examples.*openssl rand -hex 32/);
  });

  it('knows loopback addresses', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) expect({ a, loopback: isLoopback(a) }).toEqual({ a, loopback: true });
    for (const a of ['0.0.0.0', '::', '10.0.0.1', '192.0.2.2', 'fd00::2']) expect({ a, loopback: isLoopback(a) }).toEqual({ a, loopback: false });
  });
});
