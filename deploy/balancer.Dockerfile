# The balancer of docker-compose.yml: Debian's nginx on the project's base image (no registry).
# Built by `make image` (docker-compose.yml's balancer service names this file).
ARG BASE=envserver-base:bookworm
FROM ${BASE}
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends nginx-light \
    && rm -rf /var/lib/apt/lists/*
COPY deploy/nginx.conf deploy/balancer.sh /etc/envserver-balancer/
USER www-data
CMD ["sh", "/etc/envserver-balancer/balancer.sh"]
