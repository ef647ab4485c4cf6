import dagster as dg
import pytest

from crawl_assets.orchestration.resources import RegistryResource
from crawl_assets.orchestration.sensors.registry_sensor import build_registry_sensor


KIND = {"telegram": "channel", "x": "search_query"}


def entries(names, platform="telegram", tenant="acme"):
    return "".join(
        f"  - name: {n}\n    tenant: {tenant}\n    platform: {platform}\n    kind: {KIND[platform]}\n    identifier: {n}\n"
        for n in names
    )


def tick(instance, path):
    ctx = dg.build_sensor_context(instance=instance, resources={"registry": RegistryResource(path=str(path))})
    result = build_registry_sensor()(ctx)
    if isinstance(result, dg.SensorResult):
        for req in result.dynamic_partitions_requests or []:
            if isinstance(req, dg.AddDynamicPartitionsRequest):
                instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
            else:
                for key in req.partition_keys:
                    instance.delete_dynamic_partition(req.partitions_def_name, key)
    return result


@pytest.fixture
def instance():
    with dg.instance_for_test() as inst:
        yield inst


def test_adds_retires_and_settles(instance, tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n" + entries(["a", "b"]) + entries(["q"], platform="x"))
    result = tick(instance, path)
    assert isinstance(result, dg.SensorResult)
    assert sorted(instance.get_dynamic_partitions("telegram_sources")) == ["acme.telegram.a", "acme.telegram.b"]
    assert instance.get_dynamic_partitions("x_sources") == ["acme.x.q"]
    assert isinstance(tick(instance, path), dg.SkipReason), "nothing to do when partitions match"

    path.write_text("sources:\n" + entries(["b", "c"]))
    tick(instance, path)
    assert sorted(instance.get_dynamic_partitions("telegram_sources")) == ["acme.telegram.b", "acme.telegram.c"]
    assert instance.get_dynamic_partitions("x_sources") == []


def test_invalid_entry_blocks_retirement_but_not_additions(instance, tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n" + entries(["a", "b"]))
    tick(instance, path)
    # 'a' got a typo (invalid kind): it must not vanish; 'new' is still added.
    path.write_text("sources:\n" + entries(["b", "new"]) + "  - name: a\n    tenant: acme\n    platform: telegram\n    kind: chanel\n    identifier: a\n")
    tick(instance, path)
    assert sorted(instance.get_dynamic_partitions("telegram_sources")) == ["acme.telegram.a", "acme.telegram.b", "acme.telegram.new"]


def test_unreadable_registry_changes_nothing(instance, tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n" + entries(["a"]))
    tick(instance, path)
    path.write_text("sources: [oops\n")
    result = tick(instance, path)
    assert isinstance(result, dg.SkipReason) and "unreadable" in result.skip_message
    assert instance.get_dynamic_partitions("telegram_sources") == ["acme.telegram.a"]


def test_thousands_of_sources_go_in_one_request_per_platform(instance, tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n" + entries([f"c{i}" for i in range(3000)]) + entries([f"q{i}" for i in range(500)], platform="x"))
    ctx = dg.build_sensor_context(instance=instance, resources={"registry": RegistryResource(path=str(path))})
    result = build_registry_sensor()(ctx)
    adds = result.dynamic_partitions_requests
    assert [(r.partitions_def_name, len(r.partition_keys)) for r in adds] == [("telegram_sources", 3000), ("x_sources", 500)]


def test_a_partition_added_in_the_ui_but_not_in_the_registry_is_retired(instance, tmp_path):
    """The launch dialog's "Add a partition" writes straight to the instance; the registry stays the truth."""
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n" + entries(["a"]))
    tick(instance, path)
    instance.add_dynamic_partitions("telegram_sources", ["acme.telegram.typed-in-ui"])  # what the dialog does
    result = tick(instance, path)
    assert isinstance(result, dg.SensorResult)
    assert instance.get_dynamic_partitions("telegram_sources") == ["acme.telegram.a"]
