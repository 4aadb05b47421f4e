# Two commands do everything on a fresh Debian 12 machine with Python 3.11:
#   make serve   set up .venv for serving (every family's packages, nothing else) and run the server
#   make test    set up .venv for development (tests, training, browsers, benchmarks too) and run
#                lint, types and tests
# Set-up is idempotent: each stamp is remade only when pyproject.toml changes, and a venv set up
# for the tests serves as it is (it holds everything serving needs).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SERVE_STAMP := $(VENV)/.serve-installed
STAMP := $(VENV)/.installed
# Much of a test's time is servers starting and subprocesses: more workers than cores pay off.
# Each test file runs whole on one worker (pyproject's --dist loadfile).
TEST_WORKERS ?= 4
# The suite starts hundreds of Python processes (servers, their pools, the CLI, four workers that
# each collect every file): they share the bytecode in __pycache__ instead of each compiling the
# project again, also where the environment turns writing it off (a fresh clone with
# PYTHONDONTWRITEBYTECODE set paid about 4 CPU-s more per server start, 7 per worker's collection).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q
# The Ray Serve file starts a Ray node of its own. Beside the parallel suite on 2 cores, Serve
# timed out its own starting proxy and replicas and started them again for over 10 minutes; alone
# it takes about 80 s, beside mypy (one core) in `make test`.
RAY_TESTS := tests/test_ray_serve.py

.PHONY: setup setup-serve venv test-tools serve test lint types unit unit-ray unit-parallel audit-search bench clean \
	engine-tools base-image image image-python image-balancer image-postgres compose-up compose-down

# What serving needs from the system: a venv, and libseccomp for the sandbox.
venv:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	@if ! $(PYTHON) -m venv --help >/dev/null 2>&1 || ! $(PYTHON) -c 'import ensurepip' 2>/dev/null; then \
		echo "installing python3-venv"; apt-get update -qq && apt-get install -y -qq python3-venv; fi
	@ldconfig -p | grep -q libseccomp.so.2 || { apt-get update -qq && apt-get install -y -qq libseccomp2; }
	@test -x $(BIN)/python || { $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install -q --upgrade pip; }

setup-serve: $(SERVE_STAMP)

# The serve extra: every family's packages. ALFWorld's own engine (alfworld) and Ray Serve (ray)
# stay opt-in: the catalogue names them, with the line that installs them, where they are absent.
$(SERVE_STAMP): pyproject.toml
	@$(MAKE) --no-print-directory venv
	$(BIN)/python -m pip install -q -e '.[serve]'
	@touch $@

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory venv
	@# The playground's browser tests drive Debian's chromium through its chromedriver.
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium chromium-driver; }
	@# ALFWorld's engine (the alfworld extra) builds Fast Downward and Jericho from source.
	@command -v g++ >/dev/null && command -v cmake >/dev/null || { apt-get update -qq && apt-get install -y -qq g++ cmake make; }
	@# EvoEnv's store test starts a real PostgreSQL server (initdb, pg_ctl) from Debian's package.
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq postgresql; }
	@# benchmarks/load.py drives the server with wrk, a native load generator.
	@command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
	@# The venv first on PATH: fast-downward-textworld's build runs a bare `python`.
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pip install -q -e '.[all,dev,train,trainers]'
	@# verl and OpenRLHF without their GPU stacks, as their CPU CI does (see the trainers extra);
	@# OpenEnv's client without gradio (it would downgrade pillow).
	$(BIN)/python -m pip install -q --no-deps verl==0.9.1 openrlhf==0.11.2 tensordict==0.10.0 pyvers==0.1.0 openenv==0.10.0
	@# Everything serving needs is in it too: `make serve` after `make test` installs nothing.
	@touch $(SERVE_STAMP) $@

# Tools the tests use beyond Python (the README examples are run with curl).
test-tools:
	@command -v curl >/dev/null || { apt-get update -qq && apt-get install -y -qq curl; }
	@# deploy/prometheus's alert rules are checked and unit-tested with Prometheus's promtool.
	@command -v promtool >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus; }

# Containers, from Debian's packages alone: the engine (docker.io: dockerd, containerd, runc),
# debootstrap for the base image, and Compose. Compose is Debian's docker-compose (1.29): the
# Compose v2 plugin is not packaged for Debian 12 and no registry we use ships Docker's own build
# of it (a PyPI wheel of it is a third party's repackaging). docker-compose.yml is written for the
# Compose Specification, which v2 reads as well. gVisor's runsc (Debian's 2022-12 release) is not
# installed: it lacks pidfd_open, which the sandbox's workers need (deploy/README.md).
DOCKER ?= docker
COMPOSE ?= docker-compose -p envserver
BASE_IMAGE := envserver-base:bookworm
DEBIAN_MIRROR ?= http://deb.debian.org/debian

engine-tools:
	@command -v dockerd >/dev/null && command -v debootstrap >/dev/null && command -v docker-compose >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io debootstrap docker-compose; }

# The base every image starts from: Debian 12 by debootstrap, imported (no image registry).
base-image: engine-tools
	@$(DOCKER) image inspect $(BASE_IMAGE) >/dev/null 2>&1 || { \
		set -e; rm -rf .build/rootfs; mkdir -p .build; \
		debootstrap --variant=minbase bookworm .build/rootfs $(DEBIAN_MIRROR) >.build/debootstrap.log; \
		printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s-security bookworm-security main\n' \
			$(DEBIAN_MIRROR) $(DEBIAN_MIRROR) $(DEBIAN_MIRROR) >.build/rootfs/etc/apt/sources.list; \
		rm -rf .build/rootfs/var/cache/apt/archives/*.deb .build/rootfs/var/lib/apt/lists/*; \
		tar -C .build/rootfs -c . | $(DOCKER) import -c 'ENV LANG=C.UTF-8' \
			-c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - $(BASE_IMAGE); \
		rm -rf .build/rootfs; }

# The server, the sandbox's worker, the balancer and PostgreSQL (docker-compose.yml runs them),
# the last two beside the first two. Where pip must trust a proxy's CA, the host's bundle goes
# into the build context (.build/, not committed).
BUILD := $(DOCKER) build --network host -q
image: base-image
	@mkdir -p .build && if [ -f /etc/ssl/certs/ca-certificates.crt ]; then cp /etc/ssl/certs/ca-certificates.crt .build/; fi
	@$(MAKE) --no-print-directory -j3 --output-sync image-python image-balancer image-postgres
	@$(DOCKER) images --format '{{.Repository}}:{{.Tag}} {{.Size}}' 'envserver*'

image-python:
	$(BUILD) --target sandbox -t envserver-sandbox:latest .
	$(BUILD) -t envserver:latest .

image-balancer:
	$(BUILD) -f deploy/balancer.Dockerfile -t envserver-balancer:latest .

image-postgres:
	$(BUILD) -f deploy/postgres.Dockerfile -t envserver-postgres:latest .

compose-up: image
	$(COMPOSE) up -d --no-build

compose-down:
	$(COMPOSE) down

# A venv set up for the tests serves as it is; otherwise the serving set-up.
serve:
	@test $(STAMP) -nt pyproject.toml || $(MAKE) --no-print-directory setup-serve
	$(BIN)/envserver serve

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

types: setup
	$(BIN)/mypy

# The whole suite: the Ray file alone, then every other file on TEST_WORKERS workers.
unit:
	@$(MAKE) --no-print-directory unit-ray
	@$(MAKE) --no-print-directory unit-parallel

unit-ray: setup test-tools
	$(PYTEST) $(RAY_TESTS)

unit-parallel: setup test-tools
	$(PYTEST) -n $(TEST_WORKERS) --ignore=$(RAY_TESTS)

test: lint
	@$(MAKE) --no-print-directory -j2 --output-sync types unit-ray
	@$(MAKE) --no-print-directory unit-parallel

# The searching adversary, longer than CI's (tests/test_search.py: 20 s a family): every family's
# moves for SEARCH_BUDGET_S seconds each; exit code 4 on any answer paid more than it deserves.
SEARCH_BUDGET_S ?= 300
audit-search: setup
	$(BIN)/envserver audit --search --budget-s $(SEARCH_BUDGET_S)

bench: setup
	$(BIN)/python -m benchmarks.math_verify_throughput
	$(BIN)/python -m benchmarks.math_answer_checks
	$(BIN)/python -m benchmarks.math_rules
	$(BIN)/python -m benchmarks.step_latency
	$(BIN)/python -m benchmarks.pool_hop
	$(BIN)/python -m benchmarks.load
	$(BIN)/python -m benchmarks.opt_verify
	$(BIN)/python -m benchmarks.sandbox_throughput
	$(BIN)/python -m benchmarks.sandbox_ab
	$(BIN)/python -m benchmarks.sbol_verify
	$(BIN)/python -m benchmarks.grpo_learning
	$(BIN)/python -m benchmarks.tamarin_step_latency
	$(BIN)/python -m benchmarks.webshop_search
	$(BIN)/python -m benchmarks.alfworld_step
	$(BIN)/python -m benchmarks.sva_check
	$(BIN)/python -m benchmarks.token_seal
	$(BIN)/python -m benchmarks.reward_metrics
	$(BIN)/python -m benchmarks.opt_reset
	$(BIN)/python -m benchmarks.recovery
	$(BIN)/python -m benchmarks.server_start
	$(BIN)/python -m benchmarks.stream_cpu
	$(BIN)/python -m benchmarks.options_hop
	$(BIN)/python -m benchmarks.alfworld_released
	$(BIN)/python -m benchmarks.verl_reward

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
