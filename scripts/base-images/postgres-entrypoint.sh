#!/bin/sh
# Creates the cluster, role and database at first start, as the public postgres image does, then runs the
# server as the `postgres` user in the foreground (PID 1, so that `docker stop` reaches it).
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /run/postgresql
  chown -R postgres:postgres "$PGDATA" /run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "POSTGRES_PASSWORD must be set: the database is reached over the network with it" >&2; exit 1; }
  password_file=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$password_file"
  initdb --pgdata="$PGDATA" --username="$POSTGRES_USER" --pwfile="$password_file" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$password_file"
  echo 'host all all all scram-sha-256' >> "$PGDATA/pg_hba.conf"
  pg_ctl --pgdata="$PGDATA" --options="-c listen_addresses=''" --wait --silent start
  if [ "$POSTGRES_DB" != postgres ]; then
    psql --username="$POSTGRES_USER" --dbname=postgres --quiet --set=ON_ERROR_STOP=1 --set=db="$POSTGRES_DB" <<'SQL'
CREATE DATABASE :"db";
SQL
  fi
  pg_ctl --pgdata="$PGDATA" --mode=fast --wait --silent stop
fi
if [ "$#" -eq 0 ] || [ "$1" = postgres ]; then
  [ "$#" -eq 0 ] || shift
  exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
fi
exec "$@"
