"""Raw batches of real syncs go through the ``telegram`` normalizer unchanged: no rejected message."""

from __future__ import annotations

from datetime import datetime

import pytest

from crawl_assets_tests.sources.telegram.conftest import entry

normalize = pytest.importorskip("crawl_assets.normalize")


def _normalize_all(h, kinds):
    records, rejections = [], []
    for batch in h.lake.raw_batches("default", "telegram", h.source.key):
        if batch.manifest.extra.get("kind") not in kinds:
            continue
        ctx = normalize.NormalizeContext(tenant="default", source=h.source.key, method=batch.manifest.method,
                                         collected_at=datetime.fromisoformat(batch.manifest.collected_at))
        with h.lake.open_raw(batch) as fh:
            for item in normalize.normalize_stream(batch.manifest.format, fh, name=batch.path, context=ctx):
                (rejections if item.__class__.__name__ == "Rejection" else records).append(item)
    return records, rejections


def test_messages_comments_and_chat_batches_normalize_without_rejections(world, harness_factory):
    chat = world.channel("norm", messages=700)
    group = world.discussion(chat, posts=10)
    h = harness_factory(entry("norm", "@norm", comments=True))
    h.sync()
    chat.edit(690)
    chat.bump(650)
    h.sync()
    records, rejections = _normalize_all(h, {"chat", "forward", "backfill", "refresh"})
    errors = [r for r in rejections if r.error]
    assert not errors, errors[:3]
    assert all(r.reason == "service message" for r in rejections)  # MessageService lines: counted, not errors
    keys = {r.key for r in records}
    assert f"telegram:{chat.id}:699" in keys and any(k.startswith(f"telegram:{group.id}:") for k in keys)
    post = next(r for r in records if r.key == f"telegram:{chat.id}:10")
    assert post.kind == "repost" and post.repost_of == f"telegram:{tm_origin()}:1"
    fa = next(r for r in records if r.key == f"telegram:{chat.id}:696")  # template 0: Persian with entities
    assert fa.hashtags == ["خبر_فوری"] and fa.mentions == ["news_fa"] and fa.urls
    emoji = next(r for r in records if r.key == f"telegram:{chat.id}:698")  # template 2: emoji before entities
    assert emoji.hashtags == ["ایران"] and emoji.mentions == ["reporter_1"]
    assert emoji.urls == ["https://t.me/s/example"]
    edited = [r for r in records if r.key == f"telegram:{chat.id}:690"]
    assert len(edited) == 2 and any(r.edited_at is not None for r in edited)


def tm_origin() -> int:
    from crawl_assets_tests.standins.telegram_mtproto import ORIGIN_CHANNEL_ID

    return ORIGIN_CHANNEL_ID


def test_deletion_lines_normalize(world, harness_factory):
    """Deletion markers ({"_": "crawl_assets.deleted", ...}) must become deleted records, not rejections."""
    chat = world.channel("gone", messages=300)
    h = harness_factory(entry("gone", "@gone"))
    h.sync()
    chat.delete(290)
    h.sync()
    records, rejections = _normalize_all(h, {"refresh"})
    assert not [r for r in rejections if r.error]
    deleted = [r for r in records if r.key == f"telegram:{chat.id}:290"]
    assert deleted and deleted[0].deleted


def test_a_supergroup_source_normalizes_with_its_members_as_authors(world, harness_factory):
    from crawl_assets.registry import SourceEntry
    from crawl_assets_tests.standins.telegram_mtproto import COMMENTER

    group = world.channel("devs_group", messages=250, megagroup=True, title="گروه توسعه")
    source = SourceEntry(name="devs", platform="telegram", kind="group", identifier="https://t.me/devs_group")
    h = harness_factory(source)
    result = h.sync()
    assert result.state["history_complete"] and result.state["peer"]["kind"] == "channel"
    meta = next(b for b in h.lake.raw_batches("default", "telegram", source.key) if b.manifest.extra["kind"] == "chat")
    assert meta.manifest.extra["chat"]["megagroup"] is True
    records, rejections = _normalize_all(h, {"chat", "forward", "backfill"})
    assert not [r for r in rejections if r.error]
    assert len(records) == 250 - 1 - 2  # minus the creation and pin service messages
    assert {r.author_id for r in records} == {str(COMMENTER.id)}
    assert all(r.key.startswith(f"telegram:{group.id}:") for r in records)
