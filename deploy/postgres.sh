#!/bin/sh
# The PostgreSQL container's start: a cluster made on first start in the volume (user
# envserver, password from POSTGRES_PASSWORD, password authentication only), then the server
# in the foreground on POSTGRES_LISTEN:POSTGRES_PORT.
set -eu
data=/var/lib/envserver-postgres/data
bin=$(echo /usr/lib/postgresql/*/bin)
if [ ! -s "$data/PG_VERSION" ]; then
    password=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$password"
    "$bin/initdb" -D "$data" -U envserver --pwfile="$password" --auth=scram-sha-256 -E UTF8 \
        >/dev/null
    rm -f "$password"
fi
exec "$bin/postgres" -D "$data" -k /tmp \
    -c listen_addresses="${POSTGRES_LISTEN:-127.0.0.1}" -p "${POSTGRES_PORT:-5432}"
