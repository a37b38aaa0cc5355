# One image for every program of the crawler: the pipeline services, the control plane and the CLI.
#
#   docker build -t crawler .
#   docker run --rm crawler frontier            # or: docker run -e SERVICE=frontier crawler
#   docker run --rm -v "$PWD/out:/data" crawler crawl https://example.com/ --max-pages 20
#   docker build --target render -t crawler-render .   # the same image plus Chromium, for plugin-render only
#
# Stages: `build` compiles TypeScript with the dev dependencies (npm run build → dist/apps/<name>/src/main.js),
# `deps` installs the production dependencies only, `runtime` holds those two outputs and nothing else, run
# by an unprivileged user, and `render` adds Chromium to it. `docker build` without --target builds the last
# stage, `default`: the runtime as it is, so that the browser's weight stays out of every other service (and
# BuildKit skips `render` unless asked for it). See docs/deploy.md.
#
# No `# syntax=` line: the Dockerfile frontend built into the engine reads this file, so a build needs no
# registry but the one its base image comes from, and none at all with NODE_IMAGE built from Debian
# packages (scripts/base-images/build.sh). Behind a proxy that re-signs TLS, give npm the proxy's CA
# certificates as a build secret: `docker build --secret id=build_ca,src=/etc/ssl/certs/ca-certificates.crt .`
# (Compose: CRAWLER_BUILD_CA_FILE). The secret is mounted for `npm ci` only and is in no layer.

# Node.js 24, the LTS line supported longest (to April 2028), and the first with zstd built in; the code
# runs on Node.js 20 as well (package.json's engines), which development machines may still have.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=build_ca NODE_EXTRA_CA_CERTS=/run/secrets/build_ca npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts: the one native module (msgpackr-extract) loads its prebuilt binary at run time.
RUN --mount=type=secret,id=build_ca NODE_EXTRA_CA_CERTS=/run/secrets/build_ca npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist/apps ./dist/apps
COPY --from=build /src/dist/libs ./dist/libs
COPY package.json ./
COPY --chmod=0555 scripts/docker-entrypoint.sh scripts/docker-healthcheck.sh ./scripts/
# The embedded crawl writes to ./crawl-data: the working directory is the one place the user may write.
RUN mkdir -p /data && chown 1000:1000 /data
WORKDIR /data
# uid 1000 is the image's `node` user; numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=10s --start-period=60s --retries=3 CMD ["bash", "/app/scripts/docker-healthcheck.sh"]
ENTRYPOINT ["/app/scripts/docker-entrypoint.sh"]
CMD []

# The rendering plugin's image: the runtime plus Debian's Chromium and one font family, Liberation (fontconfig
# wants one; it has the metrics of Arial, Times and Courier that pages lay text out with). Missing glyphs
# (CJK, emoji) change only the layout, never the DOM text the parser is given. No chromium-sandbox (a
# recommendation, left out): the plugin launches Chromium with --no-sandbox, because its sandbox needs user
# namespaces or a setuid helper, which the default seccomp profile and no-new-privileges refuse to a
# non-root container.
FROM runtime AS render
USER root
RUN apt-get update && apt-get install -y --no-install-recommends chromium fonts-liberation && rm -rf /var/lib/apt/lists/*
USER 1000:1000
ENV PLUGIN_RENDER_CHROMIUM_PATH=/usr/bin/chromium

# The default target, last: the runtime without Chromium, for every service but plugin-render.
FROM runtime AS default
