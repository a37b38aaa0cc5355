# Sourced by .ci/run: a Docker engine with Compose v2 for the deploy test (docker_engine), and the base images
# built from Debian packages (docker_base_images; no container registry is reachable on the CI machines).
# Debian 12 packages the engine but only Compose v1, which cannot read our files: Compose v2 and buildx are
# taken from Debian 13's packages (static Go binaries), checked against the hash its package index gives.

docker_plugin_from_trixie() { # package, binary
  local index=/tmp/trixie-packages.xz filename sha
  [ -s "$index" ] || curl -fsSL http://deb.debian.org/debian/dists/trixie/main/binary-amd64/Packages.xz -o "$index" || return 1
  read -r filename sha < <(xz -dc "$index" | awk -v p="$1" '$1=="Package:"{m=($2==p)} m&&$1=="Filename:"{f=$2} m&&$1=="SHA256:"{print f, $2; exit}')
  curl -fsSL "http://deb.debian.org/debian/$filename" -o "/tmp/$1.deb" || return 1
  echo "$sha  /tmp/$1.deb" | sha256sum -c --quiet || return 1
  dpkg-deb --fsys-tarfile "/tmp/$1.deb" | tar -xO "./usr/libexec/docker/cli-plugins/$2" > "/usr/libexec/docker/cli-plugins/$2" || return 1
  chmod 0755 "/usr/libexec/docker/cli-plugins/$2"
}

# Installs and starts the engine: run in the foreground, since it takes apt's lock.
docker_engine() {
  if ! command -v dockerd >/dev/null 2>&1 || ! command -v mmdebstrap >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io iptables mmdebstrap >/dev/null || return 1
  fi
  mkdir -p /usr/libexec/docker/cli-plugins
  docker compose version >/dev/null 2>&1 || docker_plugin_from_trixie docker-compose docker-compose || return 1
  docker buildx version >/dev/null 2>&1 || docker_plugin_from_trixie docker-buildx docker-buildx || return 1
  if ! docker info >/dev/null 2>&1; then
    dockerd > /var/log/dockerd.log 2>&1 &
    for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  fi
  docker info --format 'docker {{.ServerVersion}}, {{.Driver}}' || return 1
  docker compose version || return 1
}

# Builds the base images and exports their names: slow (package downloads), so .ci/run runs it in the
# background. mmdebstrap runs apt inside its own root, and takes no lock of this machine's.
docker_base_images() {
  # npm inside the image build goes through the same TLS-intercepting proxy as this machine's npm.
  export CRAWLER_BUILD_CA_FILE=${CRAWLER_BUILD_CA_FILE:-$(npm config get cafile 2>/dev/null | grep -v '^null$' || echo /etc/ssl/certs/ca-certificates.crt)}
  BASE_IMAGES=$(scripts/base-images/build.sh) || return 1
  echo "$BASE_IMAGES"
  while read -r assignment _; do export "${assignment?}"; done <<<"$BASE_IMAGES"
}
