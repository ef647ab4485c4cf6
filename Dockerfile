# One image for the code location, dagster-webserver and dagster-daemon (docker-compose.yml).
FROM python:3.11-slim
WORKDIR /opt/crawl_assets
COPY pyproject.toml setup.py README.md constraints.txt ./
COPY crawl_assets ./crawl_assets
# [k8s]: dagster-k8s, which run pods launched by the Helm chart's K8sRunLauncher import with the instance.
RUN pip install --no-cache-dir -c constraints.txt ".[k8s]"
COPY workspace.yaml ./
ENV DAGSTER_HOME=/opt/dagster_home
RUN mkdir -p $DAGSTER_HOME
COPY dagster.yaml $DAGSTER_HOME/dagster.yaml
