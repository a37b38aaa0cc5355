#!/bin/bash
# The image's HEALTHCHECK: GET http://127.0.0.1:$PORT/health (PORT as the service reads it, default 3000)
# and exit 0 on a 2xx answer, 1 otherwise. A container running a one-shot tool (crawl, or the cluster CLI)
# serves no HTTP, so there the check passes while the tool runs. `--proc DIR` reads processes from DIR
# instead of /proc (for tests).
#
# Bash and its built-in /dev/tcp, not Node: Docker runs the check every 15 s in every container, and starting
# Node costs a tenth to a third of a second of CPU each time, a quarter of a core or more for the twenty
# containers of a stack on a small machine, where bash costs a millisecond. On a loaded machine those Node
# starts took seconds and the checks timed out, so healthy services were marked unhealthy.
set -u

proc=/proc
[ "${1:-}" = --proc ] && proc=$2

# Whether a process of this container runs one of the tools of apps/crawl (PID 1, or under an init).
for cmdline in "$proc"/[0-9]*/cmdline; do
  mapfile -d '' -t args 2>/dev/null <"$cmdline" || continue # ended meanwhile, or not ours to read
  for arg in "${args[@]}"; do
    [[ $arg =~ /apps/crawl/src/[^/]+\.js$ ]] && exit 0
  done
done

port=${PORT:-3000}
if ! { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
  echo "health: nothing answers on port $port" >&2
  exit 1
fi
printf 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
# The service's own checks give up after 2 s; Docker's timeout (10 s) is the outer bound.
if ! read -r -t 8 _ code _ <&3; then
  echo "health: no answer within 8 s" >&2
  exit 1
fi
[[ $code == 2[0-9][0-9] ]] && exit 0
echo "health: HTTP $code" >&2
exit 1
