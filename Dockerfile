# syntax=docker/dockerfile:1
# One image for every program of the crawler: the pipeline services, the control plane and the CLI.
#
#   docker build -t crawler .
#   docker run --rm crawler frontier            # or: docker run -e SERVICE=frontier crawler
#   docker run --rm -v "$PWD/out:/data" crawler crawl https://example.com/ --max-pages 20
#
# Stages: `build` compiles TypeScript with the dev dependencies (npm run build → dist/apps/<name>/src/main.js),
# `deps` installs the production dependencies only, and the final stage holds those two outputs and
# nothing else, run by an unprivileged user. See docs/deploy.md.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts: the one native module (msgpackr-extract) loads its prebuilt binary at run time.
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist/apps ./dist/apps
COPY --from=build /src/dist/libs ./dist/libs
COPY package.json ./
COPY --chmod=0555 scripts/docker-entrypoint.sh scripts/docker-healthcheck.js ./scripts/
# The embedded crawl writes to ./crawl-data: the working directory is the one place the user may write.
RUN mkdir -p /data && chown 1000:1000 /data
WORKDIR /data
# uid 1000 is the image's `node` user; numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/scripts/docker-healthcheck.js"]
ENTRYPOINT ["/app/scripts/docker-entrypoint.sh"]
CMD []
