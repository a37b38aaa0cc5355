#!/bin/sh
# The container image's entrypoint: starts one of the crawler's programs by name, so that one image runs
# any of them.
#
#   docker run crawler frontier                      a pipeline service (or SERVICE=frontier, no argument)
#   docker run -e SERVICES=frontier,url-seen crawler services   several of them in one process
#   docker run crawler crawl https://example.com/    the embedded crawler, all services in one process
#   docker run crawler seed --wait example.com       submit seeds to a running cluster's control plane
#   docker run crawler status                        ...read its status, pause or resume it (CONTROL_PLANE_URL)
#
# Anything after the name is passed to the program. The program replaces this shell (exec), so it is
# PID 1, receives SIGTERM itself and drains before it exits.
set -eu

# The build's root (…/dist lives there), found from this script's own place: /app in the image, the
# checkout when run from source.
ROOT=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)

usage() {
  cat >&2 <<'EOF'
usage: <program> [arguments...]   (or set SERVICE=<program>)
services: frontier dns-resolver downloader content-parser content-seen url-extractor url-filter url-seen control-plane
plugins:  plugin-<name> (each plugin built into dist/apps/plugin-<name>, e.g. plugin-png)
together: services (the services SERVICES names, comma-separated, in one process)
tools:    crawl (embedded crawl)   seed status pause resume failed failed-urls dead-letters operator-audit (drive a cluster's control plane, CONTROL_PLANE_URL)
EOF
}

# Prints the file and leading arguments that run a program, or fails for a name that is none.
resolve() {
  case "$1" in
    frontier | dns-resolver | downloader | content-parser | content-seen | url-extractor | url-filter | url-seen | control-plane)
      echo "$ROOT/dist/apps/$1/src/main.js" ;;
    crawl) echo "$ROOT/dist/apps/crawl/src/main.js" ;;
    services) echo "$ROOT/dist/apps/crawl/src/services-main.js" ;;
    # A plugin's service, by its app's name: any plugin-<name> that was built (a new plugin needs no edit here).
    plugin-*[!a-z0-9-]* | plugin-) return 1 ;;
    plugin-*) [ -f "$ROOT/dist/apps/$1/src/main.js" ] || return 1; echo "$ROOT/dist/apps/$1/src/main.js" ;;
    seed | status | pause | resume | failed | failed-urls | dead-letters | operator-audit) echo "$ROOT/dist/apps/crawl/src/cluster-cli.js $1" ;;
    *) return 1 ;;
  esac
}

if [ $# -gt 0 ] && resolve "$1" >/dev/null; then
  name=$1
  shift
elif [ -n "${SERVICE:-}" ]; then
  name=$SERVICE
else
  if [ $# -gt 0 ]; then echo "crawler: unknown program \"$1\"" >&2; fi
  usage
  exit 64
fi

if ! target=$(resolve "$name"); then
  echo "crawler: unknown program \"$name\" (from SERVICE)" >&2
  usage
  exit 64
fi
# $target is "<file>" or "<file> <subcommand>": no spaces in either, so word splitting is intended.
# shellcheck disable=SC2086
set -- $target "$@"
if [ ! -f "$1" ]; then
  echo "crawler: $1 is missing: was the image built with npm run build?" >&2
  exit 70
fi
exec node "$@"
