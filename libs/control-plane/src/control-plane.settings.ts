import { z } from 'zod';
import { bool, int } from '@crawler/settings';

/** `config.controlPlane`: its token, who may read, its limits (assembled by @crawler/config). */
export const controlPlaneSettings = z.object({
  /**
   * The secret that every request changing the crawl must carry as `Authorization: Bearer <token>`: at least 16
   * printable characters, e.g. `openssl rand -hex 32`. Absent: the control plane listens on loopback only. The CLI
   * reads the same variable.
   */
  token: z
    .string()
    .min(16, 'is too short: use at least 16 characters, e.g. `openssl rand -hex 32`')
    .regex(/^[\x21-\x7e]+$/, 'may hold only printable ASCII characters, no spaces')
    .optional()
    .meta({ env: 'CONTROL_PLANE_TOKEN', secret: true }),
  /**
   * A file holding the token (a mounted Kubernetes or Compose secret); surrounding whitespace is ignored. Set it or
   * `CONTROL_PLANE_TOKEN`, not both.
   */
  tokenFile: z.string().min(1).optional().meta({ env: 'CONTROL_PLANE_TOKEN_FILE' }),
  /**
   * Require the token to read the crawl too (status, history, URLs and their stored content, hosts, failures, dead
   * letters, the operator audit). The dashboard's page stays open and asks for the token. Unset, reads need the
   * token whenever there is one and the control plane listens beyond loopback (`BIND_ADDRESS` not 127.x or ::1);
   * `false` opts out, leaving them open to whoever reaches it. `true` needs a token.
   * @defaultValue true with a token and a non-loopback `BIND_ADDRESS`, else false
   */
  protectReads: bool.optional().meta({ env: 'CONTROL_PLANE_PROTECT_READS' }),
  /**
   * Let a control plane without a token listen on a `BIND_ADDRESS` other than loopback, where anyone who reaches it
   * controls the crawl. It warns at every start.
   * @defaultValue false
   */
  allowUnauthenticated: bool.default(false).meta({ env: 'CONTROL_PLANE_ALLOW_UNAUTHENTICATED' }),
  /**
   * Largest request body accepted, in bytes (JSON only); larger gets `413`. The CLI splits larger seed lists into
   * several requests.
   * @defaultValue 1048576
   */
  maxBodyBytes: int(1024)
    .max(256 * 1024 * 1024)
    .default(1024 * 1024)
    .meta({ env: 'CONTROL_PLANE_MAX_BODY_BYTES' }),
  /**
   * Operator actions the operator audit keeps (seeds, pause, resume, replays, host overrides and purges, each with
   * who, from where and when; `GET /audit`), newest first, in the state store: about 300 bytes each.
   * @defaultValue 10000
   */
  auditKept: int(1).max(1_000_000).default(10_000).meta({ env: 'CONTROL_PLANE_AUDIT_KEPT' }),
  /**
   * Longest `GET /status` waits for a fresh reading of the crawl. Past it (Redis away or slow) it answers at once
   * with the last reading it has, marked stale with its age, and the outages the control plane knows of.
   * @defaultValue 1500
   */
  statusTimeoutMs: int(100).default(1500).meta({ env: 'CONTROL_PLANE_STATUS_TIMEOUT_MS' }),
});
