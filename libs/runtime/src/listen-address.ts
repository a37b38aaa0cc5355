import { isIP } from 'node:net';
import { ConfigError, CrawlerConfig } from '@crawler/config';

/** How the shipped examples' tokens begin (k8s/kustomization.yaml): a token nobody changed. */
const PLACEHOLDER = 'change-me';

export interface ListenPlan {
  address: string;
  /** Said at start (warn level): who can reach what. */
  notice?: string;
}

/** 127.0.0.0/8 and ::1 (also as ::ffff:127.x.y.z): reachable from this machine only. */
export function isLoopback(address: string): boolean {
  const v4 = address.replace(/^::ffff:/i, '');
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return isIP(address) === 6 && new URL(`http://[${address}]/`).hostname === '[::1]';
}

/**
 * Where a service's HTTP server listens. Pipeline services serve only /health and /metrics, which probes
 * and Prometheus must reach: every interface unless BIND_ADDRESS says otherwise. The control plane changes
 * the crawl: without a token it listens on loopback only, and listening elsewhere without one takes an
 * explicit opt-out, said loudly at every start.
 */
export function listenPlan(config: CrawlerConfig, controlApi: boolean): ListenPlan {
  const { token, allowUnauthenticated } = config.controlPlane;
  if (!controlApi) return { address: config.bindAddress ?? '0.0.0.0' };
  // A token anyone can read in the repository protects nothing: the examples ship one only to be replaced.
  if (token?.startsWith(PLACEHOLDER)) {
    throw new ConfigError([
      'CONTROL_PLANE_TOKEN is still the placeholder of the examples (change-me-…), which anyone can read: set your own, e.g. ' +
        '`openssl rand -hex 32` (on Kubernetes: kustomize edit add secret control-plane-token --from-literal=CONTROL_PLANE_TOKEN=$(openssl rand -hex 32))',
    ]);
  }
  if (token) return { address: config.bindAddress ?? '0.0.0.0' };
  const address = config.bindAddress ?? '127.0.0.1';
  if (isLoopback(address)) {
    return {
      address,
      notice: `no CONTROL_PLANE_TOKEN: listening on ${address} only; set a token to serve other machines`,
    };
  }
  if (!allowUnauthenticated) {
    throw new ConfigError([
      `BIND_ADDRESS: a control plane without CONTROL_PLANE_TOKEN listens on loopback only (got ${address}): set CONTROL_PLANE_TOKEN, ` +
        'or CONTROL_PLANE_ALLOW_UNAUTHENTICATED=true to let anyone who reaches this address seed, pause and reconfigure the crawl',
    ]);
  }
  return {
    address,
    notice:
      `UNAUTHENTICATED CONTROL PLANE on ${address}: CONTROL_PLANE_ALLOW_UNAUTHENTICATED is set and there is no CONTROL_PLANE_TOKEN, ` +
      'so anyone who reaches this address can seed, pause, unblock hosts and replay failed work',
  };
}

/**
 * Whether the control plane's reads (the crawl's state, its URLs and stored pages) need the token:
 * CONTROL_PLANE_PROTECT_READS when set, else whenever it has a token and listens beyond loopback, where
 * anyone on the network could read them.
 */
export function readsProtected(config: CrawlerConfig): boolean {
  const { token, protectReads } = config.controlPlane;
  if (!token) return false;
  return protectReads ?? !isLoopback(config.bindAddress ?? '0.0.0.0');
}
