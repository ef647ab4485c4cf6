from pathlib import Path

import pytest

from crawl_assets.registry import RegistryFileError, SourceEntry, SourceStatus, load_registry
from crawl_assets.registry.models import looks_like_secret
from crawl_assets_tests.fakes import FAKE_API_HASH, FAKE_HTTP_BEARER, FAKE_INTERCOM_TOKEN, FAKE_X_BEARER_LONG

GOOD = """\
# the team's sources
sources:
  - name: news   # a public channel
    tenant: acme
    platform: telegram
    kind: channel
    identifier: some_public_channel
    credential: acme_main
  - name: fa-search
    platform: x
    kind: search_query
    identifier: "#ایران lang:fa"
    policy:
      interval_minutes: 15
      history_horizon_days: 30
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "sources.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_valid_registry_keys_are_stable_and_slash_free(tmp_path):
    reg = load_registry(write(tmp_path, GOOD))
    assert reg.errors == []
    assert [e.key for e in reg.entries] == ["acme.telegram.news", "default.x.fa-search"]
    assert all("/" not in e.key for e in reg.entries)
    assert reg.get("fa-search").policy.interval_minutes == 15


def test_missing_file_is_empty_and_broken_yaml_raises(tmp_path):
    assert load_registry(tmp_path / "nope.yaml").entries == []
    with pytest.raises(RegistryFileError, match="not valid YAML"):
        load_registry(write(tmp_path, "sources: [\n  - {name: x"))
    with pytest.raises(RegistryFileError, match="'sources' list"):
        load_registry(write(tmp_path, "- just a list\n"))


@pytest.mark.parametrize(
    ("snippet", "field", "fragment"),
    [
        ("    platform: myspace\n", "platform", "unknown platform"),
        ("    platform: x\n    policy:\n      interval_minutes: 0\n", "policy.interval_minutes", "greater than 0"),
        ("    platform: x\n    colour: blue\n", "colour", "Extra inputs"),
        (f"    platform: x\n    credential: {FAKE_API_HASH}\n", "credential", "looks like a secret"),
        (f"    platform: x\n    options:\n      token: {FAKE_X_BEARER_LONG}\n", "options.token", "bearer token"),
    ],
)
def test_invalid_entry_names_file_line_entry_and_field(tmp_path, snippet, field, fragment):
    text = GOOD + "  - name: broken\n    kind: search_query\n    identifier: q\n" + snippet
    path = write(tmp_path, text)
    reg = load_registry(path)
    assert [e.name for e in reg.entries] == ["news", "fa-search"], "valid entries still load"
    assert len(reg.errors) == 1
    err = reg.errors[0]
    message = str(err)
    assert str(path) in message and "entry 3 ('broken')" in message
    assert f"field '{field}'" in message and fragment in message
    assert err.line is not None and err.line >= 17


def test_duplicate_source_is_an_error(tmp_path):
    reg = load_registry(write(tmp_path, GOOD + "  - name: news\n    tenant: acme\n    platform: telegram\n    kind: group\n    identifier: other\n"))
    assert len(reg.entries) == 2
    assert "duplicate source 'acme.telegram.news'" in str(reg.errors[0])


def test_edits_keep_comments_and_round_trip(tmp_path):
    path = write(tmp_path, GOOD)
    reg = load_registry(path)
    reg.set_status("acme.telegram.news", SourceStatus.paused, "channel went private")
    reg.add(SourceEntry(name="app", platform="x", kind="account_timeline", identifier="example_app", tenant="acme"))
    reg.save()
    text = path.read_text(encoding="utf-8")
    assert "# the team's sources" in text and "# a public channel" in text
    again = load_registry(path)
    assert again.errors == []
    assert again.get("news").status is SourceStatus.paused
    assert again.get("news").status_reason == "channel went private"
    assert again.get("app").key == "acme.x.app"
    again.remove("acme.x.app")
    again.set_status("news", SourceStatus.active)
    again.save()
    final = load_registry(path)
    assert [e.key for e in final.entries] == ["acme.telegram.news", "default.x.fa-search"]
    assert final.get("news").status_reason is None


def test_export_format_must_fit_platform():
    with pytest.raises(ValueError, match="not an export format of telegram"):
        SourceEntry(name="e", platform="telegram", kind="export_file", identifier="a.json", options={"format": "x-v2"})
    assert SourceEntry(name="e", platform="x", kind="export_file", identifier="t.js", options={"format": "x-archive"}).export_format == "x-archive"


@pytest.mark.parametrize(
    "value",
    [
        "1BVtsOKABu" + "x" * 300,  # Telethon StringSession
        "-----BEGIN PRIVATE KEY-----\nMIIE",
        FAKE_INTERCOM_TOKEN,
        "https://user:hunter2@example.org/x",
        FAKE_HTTP_BEARER,
    ],
)
def test_secret_shapes_detected(value):
    assert looks_like_secret(value)


@pytest.mark.parametrize(
    "value",
    ["durov", "#ایران OR #iran lang:fa -is:retweet", "https://forum.example.org", "com.example.app", "/data/exports/result.json", "acme_main"],
)
def test_ordinary_identifiers_are_not_secrets(value):
    assert looks_like_secret(value) is None


def test_kind_must_be_one_the_platform_supports():
    with pytest.raises(ValueError, match="kind 'forum' is not supported for telegram"):
        SourceEntry(name="f", platform="telegram", kind="forum", identifier="x")
