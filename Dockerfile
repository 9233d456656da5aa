# syntax=docker/dockerfile:1
# Row applier image. Targets:
#   runtime     (default) the daemon: applier start --foreground --config /etc/applier/applier.toml
#   reconciler  runtime + Java 17 + MariaDB Connector/J for the Spark reconciliation job
#
#   docker build -t rowapplier .
#   docker build --target reconciler -t rowapplier-reconcile .
#   docker run -v /etc/applier:/etc/applier:ro -v applier-state:/var/lib/applier rowapplier
#
# Debian bookworm is pinned: it still ships openjdk-17 (trixie does not).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: wheels for the package and every dependency --------------------------------
FROM ${PYTHON_IMAGE} AS build
# a C compiler for the compiled decoder and literals (setup.py); versions move with
# Debian's security updates, pinning them would break rebuilds
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY applier ./applier
COPY reconcile ./reconcile
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

# --- runtime: the daemon, as the non-root user applier (uid/gid 10001) -----------------
FROM ${PYTHON_IMAGE} AS runtime
ENV PATH=/opt/applier/.venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
RUN groupadd --system --gid 10001 applier \
 && useradd --system --uid 10001 --gid applier --home-dir /var/lib/applier --shell /usr/sbin/nologin applier \
 && install -d -o applier -g applier -m 0750 /var/lib/applier \
 && install -d -m 0755 /etc/applier
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python -m venv /opt/applier/.venv \
 && /opt/applier/.venv/bin/pip install --no-cache-dir --no-index --find-links=/wheels /wheels/rowapplier-*.whl
USER 10001:10001
WORKDIR /var/lib/applier
VOLUME ["/var/lib/applier"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["applier"]
CMD ["start", "--foreground", "--config", "/etc/applier/applier.toml"]

# --- reconciler: adds a Java runtime and the JDBC driver Spark reads through ------------
FROM runtime AS reconciler
USER 0:0
# Debian's security updates move these versions; pinning them would break rebuilds.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless libmariadb-java \
 && rm -rf /var/lib/apt/lists/*
USER 10001:10001
ENTRYPOINT ["reconcile"]
CMD ["run", "--config", "/etc/applier/applier.toml"]

# The default target (last stage wins otherwise): the daemon.
FROM runtime
