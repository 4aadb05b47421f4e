# One image for the server; families are installed through their extras.
FROM python:3.11-slim-bookworm
WORKDIR /app
COPY pyproject.toml README.md ./
COPY envserver ./envserver
COPY verifiers ./verifiers
COPY environments ./environments
COPY sandbox ./sandbox
COPY clients ./clients
RUN pip install --no-cache-dir '.[all]' \
    && useradd --system --uid 10001 envserver \
    && mkdir /data && chown envserver /data
USER envserver
ENV ENVSERVER_HOST=0.0.0.0 ENVSERVER_DATA_DIR=/data
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz')"
CMD ["envserver", "serve"]
