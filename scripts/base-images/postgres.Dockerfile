# PostgreSQL from Debian's package, with the public image's contract: POSTGRES_USER, POSTGRES_PASSWORD and
# POSTGRES_DB create the role and database at first start, PGDATA (default /var/lib/postgresql/data) holds
# the cluster, `pg_isready` and `psql` are on the PATH, SIGINT stops it with a fast shutdown.
ARG BASE
FROM ${BASE}
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
RUN ln -s "$(ls -d /usr/lib/postgresql/*/bin)" /usr/local/lib/postgresql-bin && { pg_dropcluster "$(ls /usr/lib/postgresql)" main || true; }
ENV PATH=/usr/local/lib/postgresql-bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PGDATA=/var/lib/postgresql/data
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
CMD ["postgres"]
