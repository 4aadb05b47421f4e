# One Dockerfile, two images, both run as non-root users:
#   docker build -t envserver .                                   the server (the last stage)
#   docker build --target sandbox -t envserver-sandbox:latest .   the docker backend's workers
# (docker compose builds both: see docker-compose.yml and deploy/README.md.)
FROM python:3.11-slim-bookworm AS base
WORKDIR /app
# libseccomp: the sandbox's syscall filter; g++/gcc: the compiled languages programs may use.
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends libseccomp2 g++ gcc \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY envserver ./envserver
COPY verifiers ./verifiers
COPY environments ./environments
COPY sandbox ./sandbox
COPY clients ./clients

# The sandbox's worker image: the docker backend starts `python -m sandbox.zygote` in long-lived
# containers of it (no network, read-only root, every capability dropped, uid 65534). It holds
# the sandbox package with what programs import: numpy, sympy (math), pySBOL3 (sbol's programs).
FROM base AS sandbox
RUN pip install --no-cache-dir '.[math,sbol]'
USER 65534:65534
CMD ["python", "-m", "sandbox.zygote", "--isolation", "weak", "--workdir", "/tmp/w"]

# The server, with every family and the Ray Serve deployment (the ray extra).
FROM base AS server
RUN pip install --no-cache-dir '.[all,ray]' \
    && useradd --system --uid 10001 envserver \
    && mkdir /data && chown envserver /data
USER envserver
ENV ENVSERVER_HOST=0.0.0.0 ENVSERVER_DATA_DIR=/data
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz')"
CMD ["envserver", "serve"]
