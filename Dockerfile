# The server and the docker sandbox backend's workers, both non-root, from one Dockerfile:
#   make image      the base image (below), then both images (docker-compose.yml builds them)
# Every stage starts from envserver-base:bookworm, which `make image` makes from Debian's own
# packages (debootstrap --variant=minbase bookworm, then docker import): no image registry is
# needed. Build with the host's network (`docker build --network host`; the compose file says
# so): the engine may have no bridge. Where the package registries are reached through a proxy
# that re-signs TLS, `make image` puts the host's CA bundle at .build/ca-certificates.crt and pip
# trusts it while building (it is not committed, and nothing at run time uses it).
ARG BASE=envserver-base:bookworm

# Python 3.11 from Debian, a virtual environment, and what the sandbox needs from the system:
# libseccomp (its syscall filter), g++ and gcc (the compiled languages programs may use).
FROM ${BASE} AS runtime
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends \
        python3 python3-venv libseccomp2 g++ gcc ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# The project's dependencies first, from pyproject.toml alone (the sources and the README change
# far more often than it does: these layers are rebuilt only when it changes). `pip install` of a
# stand-in project (an empty README and package) brings the extras' packages and the build
# backend; the project itself is installed offline once its sources are copied.
COPY pyproject.toml .build/ca-certificate[s].crt ./
RUN mkdir envserver && echo '__version__ = "0"' > envserver/__init__.py && touch README.md

# What programs in the sandbox import: numpy, sympy (math), pySBOL3 (sbol's programs), CrossHair
# (evo's symbolic search of a submitted scorer); the server's image adds the rest on top.
FROM runtime AS deps
RUN if [ -f ca-certificates.crt ]; then export PIP_CERT=$PWD/ca-certificates.crt; fi \
    && pip install -q '.[math,sbol,evo]' 'setuptools>=77' && pip uninstall -q -y envserver

# The sandbox's worker image: the docker backend starts `python -m sandbox.zygote` in long-lived
# containers of it (no network, read-only root, every capability dropped; 65534 here, and a uid
# of its own per container from the backend, sandbox/docker.py).
FROM deps AS sandbox
COPY README.md ./
COPY envserver ./envserver
COPY verifiers ./verifiers
COPY environments ./environments
COPY sandbox ./sandbox
COPY clients ./clients
RUN pip install -q --no-deps --no-build-isolation . && cd / && rm -rf /src
WORKDIR /
USER 65534:65534
CMD ["python", "-m", "sandbox.zygote", "--isolation", "weak", "--workdir", "/tmp/w"]

# The server: every family's packages (the serve extra, as `make serve` installs). ALFWorld's
# own engine (the alfworld extra builds Fast Downward from source with cmake) and Ray Serve are
# not in it: add them with --build-arg EXTRAS=serve,ray (alfworld also needs cmake and make).
FROM deps AS server
ARG EXTRAS=serve
RUN if [ -f ca-certificates.crt ]; then export PIP_CERT=$PWD/ca-certificates.crt; fi \
    && pip install -q ".[${EXTRAS}]" && pip uninstall -q -y envserver
COPY README.md ./
COPY envserver ./envserver
COPY verifiers ./verifiers
COPY environments ./environments
COPY sandbox ./sandbox
COPY clients ./clients
RUN pip install -q --no-deps --no-build-isolation . && cd / && rm -rf /src \
    && useradd --system --uid 10001 --home-dir /data envserver \
    && mkdir /data && chown envserver /data
WORKDIR /data
USER envserver
ENV ENVSERVER_HOST=0.0.0.0 ENVSERVER_DATA_DIR=/data
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s \
    CMD python -c "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/readyz' % os.environ.get('ENVSERVER_PORT', '8000'))"
CMD ["envserver", "serve"]
