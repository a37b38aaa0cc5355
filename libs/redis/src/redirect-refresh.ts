import type { Cluster } from 'ioredis';

/** A burst of redirects (every key of a moved range) re-reads the slot map at most this often. */
export const REDIRECT_REFRESH_MS = 500;

type SentCommand = { reject: (error: Error) => void };

/**
 * Re-reads the slot map when a command of an automatic pipeline is redirected. ioredis follows a MOVED or ASK
 * in a pipeline only when every command of it got the same one; an automatic pipeline mixes a node's slots,
 * so after a reshard or failover its redirected commands just fail (the callers retry them as an outage), and
 * nothing tells the client its map is stale. Without this hook only the periodic re-read would mend it, and
 * each periodic re-read costs every client milliseconds of CPU (a rebuilt 16,384-slot table).
 */
export function refreshOnRedirect(cluster: Cluster): void {
  let last = -Infinity;
  const send = cluster.sendCommand.bind(cluster);
  // Only commands sent for a pipeline name their node; the others are redirected by ioredis itself.
  cluster.sendCommand = (command, stream, node) => {
    if (node) {
      const sent = command as unknown as SentCommand;
      const reject = sent.reject;
      sent.reject = (error: Error) => {
        if (isRedirect(error) && Date.now() - last >= REDIRECT_REFRESH_MS) {
          last = Date.now();
          cluster.refreshSlotsCache();
        }
        reject.call(command, error);
      };
    }
    return send(command, stream, node);
  };
}

function isRedirect(error: Error): boolean {
  const message = error?.message ?? '';
  return message.startsWith('MOVED ') || message.startsWith('ASK ');
}
