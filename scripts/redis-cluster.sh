#!/usr/bin/env bash
# A local Redis Cluster of 3 masters and 3 replicas on loopback ports, from redis-server and redis-cli.
#
#   scripts/redis-cluster.sh start [FIRST_PORT] [DIR]   six nodes on FIRST_PORT … FIRST_PORT+5 (default 7000),
#                                                       formed into a cluster; prints its REDIS_URL
#   scripts/redis-cluster.sh stop  [FIRST_PORT] [DIR]   stops them and deletes DIR
#
# DIR (default /tmp/redis-cluster-FIRST_PORT) holds each node's nodes.conf and AOF. Nodes use noeviction
# (the crawl refuses any other policy) and a 2 s cluster-node-timeout, so a failover takes seconds.
# For benchmarks, set like the single node they are compared with: REPLICAS=0 (3 masters alone, on
# FIRST_PORT … FIRST_PORT+2) and APPENDONLY=no (no AOF).
set -euo pipefail

ACTION=${1:-start}
FIRST=${2:-7000}
DIR=${3:-/tmp/redis-cluster-$FIRST}
REPLICAS=${REPLICAS:-1}
APPENDONLY=${APPENDONLY:-yes}
case "$REPLICAS" in 0 | 1) ;; *) echo "REPLICAS must be 0 or 1, got '$REPLICAS'" >&2; exit 2 ;; esac
case "$APPENDONLY" in yes | no) ;; *) echo "APPENDONLY must be yes or no, got '$APPENDONLY'" >&2; exit 2 ;; esac
NODES=$((3 * (REPLICAS + 1)))
PORTS=$(seq "$FIRST" $((FIRST + NODES - 1)))
URL="redis+cluster://127.0.0.1:$FIRST,127.0.0.1:$((FIRST + 1)),127.0.0.1:$((FIRST + 2))"

ready() {
  for port in $PORTS; do
    redis-cli -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || return 1
  done
  # Every node must see all the others (gossip spreads the meets over a few heartbeats).
  [ "$(redis-cli -p "$FIRST" cluster nodes 2>/dev/null | grep -c connected)" -eq "$NODES" ]
}

case "$ACTION" in
  start)
    if ready 2>/dev/null; then echo "$URL"; exit 0; fi
    mkdir -p "$DIR"
    for port in $PORTS; do
      mkdir -p "$DIR/$port"
      redis-server --port "$port" --bind 127.0.0.1 --dir "$DIR/$port" --daemonize yes \
        --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
        --appendonly "$APPENDONLY" --save "" --maxmemory-policy noeviction --logfile "$DIR/$port/redis.log" >/dev/null
    done
    for port in $PORTS; do
      for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
    done
    # A node that already knows its cluster (a restart over the same DIR) needs no create.
    if [ "$(redis-cli -p "$FIRST" cluster info | sed -n 's/^cluster_known_nodes:\([0-9]*\).*/\1/p')" -lt "$NODES" ]; then
      nodes=""
      for port in $PORTS; do nodes="$nodes 127.0.0.1:$port"; done
      # shellcheck disable=SC2086
      redis-cli --cluster create $nodes --cluster-replicas "$REPLICAS" --cluster-yes >"$DIR/create.log" 2>&1 || { cat "$DIR/create.log" >&2; exit 1; }
    fi
    for _ in $(seq 300); do ready && break; sleep 0.1; done
    ready || { echo "the Redis Cluster on ports $FIRST-$((FIRST + NODES - 1)) did not become ready (see $DIR/*/redis.log)" >&2; exit 1; }
    echo "$URL"
    ;;
  stop)
    for port in $PORTS; do redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; done
    rm -rf "$DIR"
    ;;
  *)
    echo "usage: $0 start|stop [FIRST_PORT] [DIR]" >&2
    exit 2
    ;;
esac
