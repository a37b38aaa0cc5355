import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { LOGGER, Logger } from '@crawler/logging';
import { STATE_STORE, StateStore } from '@crawler/state';

/** What the control plane changed at an operator's request. */
export type OperatorActionName = 'seeds' | 'pause' | 'resume' | 'replay-failed' | 'host-controls' | 'host-purge' | 'site-settings' | 'site-settings-removed';

/** One operator action, as the audit keeps it. */
export interface OperatorAction {
  /** ISO time it was done. */
  at: string;
  /** Who: the fingerprint of the token the request carried (`token sha256:…`, never the token), or `no token`. */
  who: string;
  /** The address the request came from (a proxy's, behind one), and its X-Forwarded-For as it was sent, if any. */
  from: string;
  forwardedFor?: string;
  /** The client's User-Agent, cut to 200 characters. */
  agent?: string;
  action: OperatorActionName;
  /** What it did: the host and its controls, the seeds' count and first ones, the pause's reason… */
  detail: Record<string, unknown>;
}

export interface OperatorAuditList {
  /** How many the audit keeps (CONTROL_PLANE_AUDIT_KEPT). */
  kept: number;
  /** Newest first. */
  actions: OperatorAction[];
}

/** The parts of a request the audit reads (Express's, structurally). */
export interface AuditedRequest {
  ip?: string;
  socket?: { remoteAddress?: string };
  headers: Record<string, string | string[] | undefined>;
}

const header = (request: AuditedRequest, name: string) => {
  const value = request.headers[name];
  return (Array.isArray(value) ? value.join(', ') : value)?.slice(0, 200);
};

/**
 * The operator audit: every action taken through the control plane, with who, from where and when, kept in
 * the state store (namespace `control`, list `operator-audit`: Redis in the distributed shape, so it outlives
 * any process; memory in the embedded one), the newest CONTROL_PLANE_AUDIT_KEPT. A host's politeness audit
 * keeps only its last few entries and loses an override among the fetches; this one keeps actions only.
 * Each action is also logged as one JSON line (`event: "operator-action"`).
 */
@Injectable()
export class OperatorAudit {
  static readonly NAMESPACE = 'control';
  static readonly KEY = 'operator-audit';
  private readonly store: StateStore;
  private readonly who: string;
  private readonly kept: number;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.store = state.namespace(OperatorAudit.NAMESPACE);
    this.kept = config.controlPlane.auditKept;
    // A request that changes the crawl got here only with the token, when there is one.
    const token = config.controlPlane.token;
    this.who = token ? `token sha256:${createHash('sha256').update(token).digest('hex').slice(0, 16)}` : 'no token';
  }

  /** Records an action that was done (after it succeeded). */
  async record(request: AuditedRequest, action: OperatorActionName, detail: Record<string, unknown>): Promise<void> {
    const forwardedFor = header(request, 'x-forwarded-for');
    const agent = header(request, 'user-agent');
    const entry: OperatorAction = {
      at: new Date().toISOString(),
      who: this.who,
      from: request.ip ?? request.socket?.remoteAddress ?? 'unknown',
      ...(forwardedFor ? { forwardedFor } : {}),
      ...(agent ? { agent } : {}),
      action,
      detail,
    };
    this.logger.info({ event: 'operator-action', ...entry }, `operator: ${action}`);
    await this.store.listPushCapped(OperatorAudit.KEY, [JSON.stringify(entry)], this.kept);
  }

  /** The newest `limit` actions. */
  async list(limit = 100): Promise<OperatorAuditList> {
    const raw = await this.store.listHead(OperatorAudit.KEY, Math.min(limit, this.kept));
    const actions = raw.flatMap((line) => {
      try {
        return [JSON.parse(line) as OperatorAction];
      } catch {
        return [];
      }
    });
    return { kept: this.kept, actions };
  }
}
