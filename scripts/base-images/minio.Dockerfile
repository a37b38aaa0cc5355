# An S3-compatible stand-in for MinIO, which has no Debian package: the crawler's own small S3 server
# (path-style buckets and objects, Signature V4 checked), behind the two commands the Compose files run,
# `minio server DIR` and `mc` (ready, alias set, mb). No console: the console port is not served.
ARG BASE
FROM ${BASE}
COPY s3-server.js /opt/s3/s3-server.js
COPY minio mc /usr/local/bin/
COPY mc.js /usr/local/lib/
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 9000
ENTRYPOINT ["minio"]
CMD ["server", "/data"]
