"""deploy/helm/values.yaml against Dagster's official chart, dagster.yaml and docker-compose.yml (issue 19).

* The keys we set exist in the chart (names copied from the chart's values schema, helm/dagster/schema in
  dagster-io/dagster, for chart 1.13): a misspelt key is silently ignored by Helm, so it is caught here.
* The run limits and retries are dagster.yaml's, the code location is the one compose runs, and compose
  and Helm set the same instance, lake, Elasticsearch and registry variables.
* No secret value is in the values file: passwords and keys reach pods through Kubernetes Secret
  references only; compose takes them from the environment.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
VALUES = REPO / "deploy" / "helm" / "values.yaml"
COMPOSE = REPO / "docker-compose.yml"
DAGSTER_YAML = REPO / "dagster.yaml"

# Keys of the chart's values schema we may use (DagsterHelmValues and its subschemas, chart 1.13).
CHART_TOP = {"dagsterWebserver", "dagster-user-deployments", "postgresql", "generatePostgresqlPasswordSecret",
             "generateCeleryConfigSecret", "rabbitmq", "redis", "flower", "ingress", "imagePullSecrets",
             "computeLogManager", "scheduler", "runLauncher", "pythonLogs", "dagsterDaemon", "busybox", "migrate",
             "telemetry", "serviceAccount", "global", "retention", "additionalInstanceConfig", "concurrency"}
CHART_GLOBAL = {"postgresqlSecretName", "dagsterHome", "serviceAccountName", "celeryConfigSecretName"}
CHART_POSTGRESQL = {"image", "enabled", "postgresqlHost", "postgresqlUsername", "postgresqlPassword",
                    "postgresqlDatabase", "postgresqlParams", "postgresqlScheme", "service"}
CHART_USER_DEPLOYMENT = {
    "name", "image", "dagsterApiGrpcArgs", "codeServerArgs", "includeConfigInLaunchedRuns", "deploymentNamespace",
    "port", "replicaCount", "env", "envConfigMaps", "envSecrets", "annotations", "nodeSelector", "affinity",
    "tolerations", "podSecurityContext", "securityContext", "resources", "livenessProbe", "readinessProbe",
    "startupProbe", "labels", "volumeMounts", "volumes", "schedulerName", "initContainers", "sidecarContainers",
    "deploymentStrategy"}
CHART_K8S_RUN_LAUNCHER = {
    "image", "imagePullPolicy", "jobNamespace", "loadInclusterConfig", "kubeconfigFile", "envConfigMaps",
    "envSecrets", "envVars", "volumeMounts", "volumes", "labels", "failPodOnRunFailure", "resources",
    "schedulerName", "securityContext", "runK8sConfig"}
CHART_DAEMON = {
    "enabled", "image", "runCoordinator", "heartbeatTolerance", "env", "envConfigMaps", "envSecrets",
    "deploymentLabels", "labels", "nodeSelector", "affinity", "tolerations", "podSecurityContext", "securityContext",
    "resources", "livenessProbe", "readinessProbe", "startupProbe", "annotations", "runMonitoring", "runRetries",
    "sensors", "schedules", "backfills", "schedulerName", "volumeMounts", "volumes"}
CHART_QUEUED = {"maxConcurrentRuns", "tagConcurrencyLimits", "dequeueIntervalSeconds", "dequeueNumWorkers",
                "dequeueUseThreads", "blockOpConcurrencyLimitedRuns"}
CHART_RUN_RETRIES = {"enabled", "maxRetries", "retryOnAssetOrOpFailure"}

# Variable names that carry a secret: they may only arrive from a Secret (Helm) or the environment (compose).
SECRET_NAME = re.compile(r"(PASSWORD|SECRET|TOKEN|API_?KEY|ACCESS_KEY|SESSION|PRIVATE|CREDENTIAL)", re.I)
# What every process of a deployment must agree on, Kubernetes or compose.
SHARED_VARIABLES = ("DAGSTER_PG_HOST", "DAGSTER_PG_PORT", "DAGSTER_PG_USER", "DAGSTER_PG_DB", "CRAWL_LAKE",
                    "CRAWL_ES_URL", "CRAWL_REGISTRY", "CRAWL_IMPORT_ROOT")
SAME_VALUE = ("DAGSTER_PG_PORT", "DAGSTER_PG_USER", "DAGSTER_PG_DB", "CRAWL_LAKE", "CRAWL_REGISTRY", "CRAWL_IMPORT_ROOT")


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    return load(VALUES)


def code_deployment(values: dict[str, Any]) -> dict[str, Any]:
    [deployment] = values["dagster-user-deployments"]["deployments"]
    return deployment


def unknown_keys(values: dict[str, Any]) -> list[str]:
    """Keys the chart's schema does not have, as dotted paths."""
    out = [k for k in values if k not in CHART_TOP]
    out += [f"global.{k}" for k in values.get("global", {}) if k not in CHART_GLOBAL]
    out += [f"postgresql.{k}" for k in values.get("postgresql", {}) if k not in CHART_POSTGRESQL]
    for i, dep in enumerate(values.get("dagster-user-deployments", {}).get("deployments", [])):
        out += [f"dagster-user-deployments.deployments[{i}].{k}" for k in dep if k not in CHART_USER_DEPLOYMENT]
    k8s = values.get("runLauncher", {}).get("config", {}).get("k8sRunLauncher", {})
    out += [f"runLauncher.config.k8sRunLauncher.{k}" for k in k8s if k not in CHART_K8S_RUN_LAUNCHER]
    daemon = values.get("dagsterDaemon", {})
    out += [f"dagsterDaemon.{k}" for k in daemon if k not in CHART_DAEMON]
    queued = daemon.get("runCoordinator", {}).get("config", {}).get("queuedRunCoordinator", {})
    out += [f"dagsterDaemon.runCoordinator.config.queuedRunCoordinator.{k}" for k in queued if k not in CHART_QUEUED]
    out += [f"dagsterDaemon.runRetries.{k}" for k in daemon.get("runRetries", {}) if k not in CHART_RUN_RETRIES]
    return out


def inlined_secrets(node: Any, path: str = "") -> list[str]:
    """Paths of values that look like secrets written into the file: a secret-named key with a non-empty
    value, or an env entry (dict or ``{name, value}`` list form) of a secret-named variable with a value."""
    found: list[str] = []
    if isinstance(node, dict):
        if "name" in node and "value" in node and SECRET_NAME.search(str(node["name"])) and node["value"]:
            found.append(f"{path}[{node['name']}]")
        for key, value in node.items():
            here = f"{path}.{key}" if path else str(key)
            if key in ("secretName", "postgresqlSecretName", "envSecrets", "secretKeyRef", "secret"):
                continue  # a reference to a Secret by name, not a secret
            if SECRET_NAME.search(str(key)) and isinstance(value, (str, int, float)) and not isinstance(value, bool) \
                    and str(value) != "":  # (a flag such as generatePostgresqlPasswordSecret holds no secret)
                found.append(here)
            found += inlined_secrets(value, here)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            found += inlined_secrets(item, f"{path}[{i}]")
    return found


def test_every_key_we_set_exists_in_the_chart(values: dict[str, Any]) -> None:
    assert unknown_keys(values) == []
    assert unknown_keys({**values, "dagsterDeamon": {}}) == ["dagsterDeamon"]  # the check sees a typo


def test_runs_go_to_kubernetes_jobs_from_our_code_location(values: dict[str, Any]) -> None:
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert "k8sRunLauncher" in values["runLauncher"]["config"]
    assert values["dagster-user-deployments"]["enabled"] is True
    code = code_deployment(values)
    assert code["dagsterApiGrpcArgs"] == ["-m", "crawl_assets.definitions"]
    assert code["includeConfigInLaunchedRuns"] == {"enabled": True}  # run pods inherit env, Secrets, volumes
    assert code["image"]["repository"] and code["image"]["tag"]


def test_the_queued_coordinator_applies_dagster_yaml_limits_and_retries(values: dict[str, Any]) -> None:
    instance = load(DAGSTER_YAML)
    coordinator = values["dagsterDaemon"]["runCoordinator"]
    assert coordinator["enabled"] is True and coordinator["type"] == "QueuedRunCoordinator"
    queued = coordinator["config"]["queuedRunCoordinator"]
    runs = instance["concurrency"]["runs"]
    assert queued["maxConcurrentRuns"] == runs["max_concurrent_runs"]
    assert queued["tagConcurrencyLimits"] == runs["tag_concurrency_limits"]
    assert {"key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1} in runs[
        "tag_concurrency_limits"]  # never two runs of one source
    assert values["telemetry"] == instance["telemetry"] and values["additionalInstanceConfig"]["nux"] == instance["nux"]
    retries, ours = values["dagsterDaemon"]["runRetries"], instance["run_retries"]
    assert (retries["enabled"], retries["maxRetries"], retries["retryOnAssetOrOpFailure"]) == (
        ours["enabled"], ours["max_retries"], ours["retry_on_asset_or_op_failure"])


def test_the_instance_is_an_external_postgres_with_the_password_in_a_secret(values: dict[str, Any]) -> None:
    assert values["postgresql"]["enabled"] is False and values["postgresql"]["postgresqlHost"]
    assert values["generatePostgresqlPasswordSecret"] is False
    assert values["global"]["postgresqlSecretName"]
    env = code_deployment(values)["env"]
    assert env["DAGSTER_PG_HOST"] == values["postgresql"]["postgresqlHost"]
    assert env["DAGSTER_PG_USER"] == values["postgresql"]["postgresqlUsername"]
    assert env["DAGSTER_PG_DB"] == values["postgresql"]["postgresqlDatabase"]
    assert int(env["DAGSTER_PG_PORT"]) == values["postgresql"]["service"]["port"]


def test_no_secret_is_inlined_only_referenced(values: dict[str, Any]) -> None:
    assert inlined_secrets(values) == []
    code = code_deployment(values)
    assert all(set(ref) == {"name"} and ref["name"] for ref in code["envSecrets"])  # references by name only
    assert not [k for k in code["env"] if SECRET_NAME.search(k)]
    # The check can fail: an inlined password, an env secret (dict and list forms) are all reported.
    leaky = {**values, "postgresql": {**values["postgresql"], "postgresqlPassword": "hunter2"},
             "dagsterDaemon": {"env": [{"name": "CRAWL_ES_API_KEY", "value": "abc"}]},
             "x": {"env": {"AWS_SECRET_ACCESS_KEY": "k"}}}
    assert inlined_secrets(leaky) == ["postgresql.postgresqlPassword", "dagsterDaemon.env[0][CRAWL_ES_API_KEY]",
                                      "x.env.AWS_SECRET_ACCESS_KEY"]


def compose_env() -> dict[str, str]:
    compose = load(COMPOSE)
    envs = [compose["services"][name]["environment"] for name in ("code", "webserver", "daemon")]
    assert envs[0] == envs[1] == envs[2], "the three Dagster services share one environment"
    return envs[0]


def test_compose_and_helm_agree(values: dict[str, Any]) -> None:
    helm_env, env = code_deployment(values)["env"], compose_env()
    for name in SHARED_VARIABLES:
        assert name in helm_env and name in env, name
    assert {n: str(env[n]) for n in SAME_VALUE} == {n: str(helm_env[n]) for n in SAME_VALUE}
    assert env["CRAWL_LAKE"].startswith("s3://")  # both on object storage: no lake on a container's disk
    assert len(env["CRAWL_ES_URL"].split(",")) == len(helm_env["CRAWL_ES_URL"].split(",")) == 3
    # Secrets in compose come from the environment (an .env file), never as literals of their own.
    for name, value in env.items():
        if SECRET_NAME.search(name):
            assert re.fullmatch(r"\$\{[A-Z0-9_]+(:-[^}]*)?\}", str(value)), f"{name} must be ${{VAR}}"
    # The same code location: module and port.
    code = load(COMPOSE)["services"]["code"]["command"].split()
    helm = code_deployment(values)
    assert code[code.index("-m") + 1] == helm["dagsterApiGrpcArgs"][1]
    assert int(code[code.index("-p") + 1]) == helm["port"]
    workspace = load(REPO / "workspace.docker.yaml")
    [location] = workspace["load_from"]
    assert location["grpc_server"]["port"] == helm["port"]


def test_compose_runs_a_three_node_elasticsearch_cluster() -> None:
    services = load(COMPOSE)["services"]
    nodes = {name: s for name, s in services.items() if name.startswith("es-")}
    assert sorted(nodes) == ["es-0", "es-1", "es-2"]
    urls = compose_env()["CRAWL_ES_URL"].split(",")
    assert urls == [f"http://{name}:9200" for name in sorted(nodes)]
    for name, service in nodes.items():
        env = service["environment"]
        assert env["node.name"] == name and "discovery.type" not in env
        assert env["discovery.seed_hosts"].split(",") == sorted(nodes)
        assert env["cluster.initial_master_nodes"].split(",") == sorted(nodes)


def test_the_image_can_load_the_charts_instance() -> None:
    """Run pods load the instance the chart writes (its run launcher is dagster_k8s.K8sRunLauncher): our image
    installs the k8s extra, pinned to the same library release as dagster-postgres."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    [postgres] = [d for d in project["dependencies"] if d.startswith("dagster-postgres==")]
    assert project["optional-dependencies"]["k8s"] == [f"dagster-k8s=={postgres.split('==')[1]}"]
    assert re.search(r'pip install [^\n]*"\.\[k8s\]"', (REPO / "Dockerfile").read_text())
