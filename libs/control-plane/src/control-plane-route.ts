import { SetMetadata } from '@nestjs/common';

export const CONTROL_PLANE_ROUTE = 'crawler:control-plane-route';

/**
 * What a control-plane controller serves, for ControlPlaneAuthGuard: `data`, the crawl's state (behind the
 * token where reads are protected: readsProtected), or `shell`, the dashboard's page with its script and
 * style sheet, which a browser loads by navigation and so can never carry a header. Every route of either kind that changes the crawl needs the
 * token. Unmarked routes (/health, /metrics) are left alone: probes and Prometheus carry no token.
 */
export const ControlPlaneRoute = (kind: 'data' | 'shell') => SetMetadata(CONTROL_PLANE_ROUTE, kind);
