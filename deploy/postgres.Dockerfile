# The store the replicas of docker-compose.yml share (EvoEnv's admitted environments): Debian's
# PostgreSQL on the project's base image (no registry). Built by `make image`.
ARG BASE=envserver-base:bookworm
FROM ${BASE}
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends postgresql \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/envserver-postgres && chown postgres /var/lib/envserver-postgres
COPY deploy/postgres.sh /usr/local/lib/envserver/
USER postgres
CMD ["sh", "/usr/local/lib/envserver/postgres.sh"]
