#!/bin/sh
# Forms a Redis Cluster of REDIS_CLUSTER_NODES ("host:port host:port …", six or more: one replica per
# master) once every node answers, and waits until every node reports the cluster ok. Run it again at will:
# when any node already holds slots the cluster was formed, and it changes nothing. (A cluster formed only in
# part is a case for `redis-cli --cluster fix`, not for a second create.)
#
# The one-shot redis-cluster-init of docker-compose.cluster.yml and the Job of k8s/redis-cluster run it.
set -eu
: "${REDIS_CLUSTER_NODES:?the nodes, as host:port separated by spaces}"
WAIT_SECONDS=${REDIS_CLUSTER_WAIT_SECONDS:-300}

# ask HOST:PORT COMMAND… — the node's answer, or nothing when it does not answer.
ask() {
  asked=$1
  shift
  redis-cli -h "${asked%:*}" -p "${asked##*:}" "$@" 2>/dev/null | tr -d '\r' || true
}

# wait_for WHAT TEST… — runs TEST until it succeeds, for WAIT_SECONDS at most.
wait_for() {
  what=$1
  shift
  waited=0
  until "$@"; do
    if [ "$waited" -ge "$WAIT_SECONDS" ]; then
      echo "redis-cluster: gave up after ${WAIT_SECONDS}s waiting for $what" >&2
      exit 1
    fi
    sleep 2
    waited=$((waited + 2))
  done
}

answers() { [ "$(ask "$1" ping)" = PONG ]; }
holds_slots() { [ "$(ask "$1" cluster info | sed -n 's/^cluster_slots_assigned:\([0-9]*\)$/\1/p')" -gt 0 ] 2>/dev/null; }
cluster_ok() { ask "$1" cluster info | grep -qx 'cluster_state:ok'; }

for node in $REDIS_CLUSTER_NODES; do wait_for "$node to answer" answers "$node"; done

formed=no
for node in $REDIS_CLUSTER_NODES; do
  if holds_slots "$node"; then formed=yes; fi
done

if [ "$formed" = yes ]; then
  echo "redis-cluster: already formed, nothing to do"
else
  # CLUSTER MEET wants addresses: the nodes announce their host names to clients themselves
  # (cluster-announce-hostname, cluster-preferred-endpoint-type hostname).
  addresses=""
  for node in $REDIS_CLUSTER_NODES; do
    ip=$(getent hosts "${node%:*}" | awk '{ print $1; exit }')
    [ -n "$ip" ] || { echo "redis-cluster: cannot resolve ${node%:*}" >&2; exit 1; }
    addresses="$addresses $ip:${node##*:}"
  done
  # shellcheck disable=SC2086 # one argument per node
  redis-cli --cluster create $addresses --cluster-replicas 1 --cluster-yes
fi

for node in $REDIS_CLUSTER_NODES; do wait_for "$node to report cluster_state:ok" cluster_ok "$node"; done
echo "redis-cluster: ok"
