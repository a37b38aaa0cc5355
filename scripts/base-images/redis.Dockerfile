# Redis from Debian's package, started the way the Compose files and manifests start the public image:
# `redis-server [config] [--options]`, or `redis-cli …`, with /data as the working directory.
ARG BASE
FROM ${BASE}
COPY redis-server /usr/local/bin/redis-server
RUN mkdir -p /data /usr/local/etc/redis && chown redis:redis /data
WORKDIR /data
EXPOSE 6379
CMD ["redis-server"]
