#!/bin/sh
# The balancer's start: nginx.conf with its listen address (ENVSERVER_LISTEN, host:port) and
# its replicas (ENVSERVER_REPLICAS, host:port separated by spaces) filled in, then nginx in the
# foreground. Everything it writes goes to /tmp (the container's root is read-only).
set -eu
mkdir -p /tmp/nginx
for replica in $ENVSERVER_REPLICAS; do
    printf '    server %s max_fails=1 fail_timeout=5s;\n' "$replica"
done > /tmp/nginx/replicas.conf
sed "s|@LISTEN@|$ENVSERVER_LISTEN|" /etc/envserver-balancer/nginx.conf > /tmp/nginx/nginx.conf
exec nginx -c /tmp/nginx/nginx.conf -g 'daemon off;'
