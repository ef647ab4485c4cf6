"""A small lake of our own making for the release tests: a Telegram channel normalized from raw messages by the
real normalizer (replies, hashtags, two people), X posts stored as normalized parts, edges derived by the pipeline."""

from __future__ import annotations

import orjson

from crawl_assets.lake import Lake
from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
from crawl_assets.pipeline.relate.stage import write_relations
from crawl_assets_tests.enrich.records import batch_id, record, write_part

CHANNEL = "acme.telegram.news"
X_SOURCE = "acme.x.search"


def message(mid: int, text: str, sender: int, *, day: int = 5, reply_to: int | None = None) -> bytes:
    doc = {"_": "Message", "id": mid, "peer_id": {"_": "PeerChannel", "channel_id": 777},
           "from_id": {"_": "PeerUser", "user_id": sender}, "date": f"2026-01-{day:02d}T10:00:00+00:00",
           "message": text, "entities": []}
    if "#" in text:  # a hashtag entity as Telegram sends it (UTF-16 offsets; these texts are in the BMP)
        start = text.index("#")
        doc["entities"] = [{"_": "MessageEntityHashtag", "offset": start, "length": len(text) - start}]
    if reply_to is not None:
        doc["reply_to"] = {"_": "MessageReplyHeader", "reply_to_msg_id": reply_to}
    return orjson.dumps(doc)


MESSAGES = [
    message(1, "سلام دنیا #خبر", 501, day=5),
    message(2, "a reply in English #news", 43, day=6, reply_to=1),
    message(3, "another one from 501", 501, day=7, reply_to=2),
    message(4, "February's post", 43, day=31),
]


def make_lake(lake: Lake, tenant: str = "acme") -> Lake:
    source = CHANNEL.replace("acme", tenant, 1)
    batch = lake.write_raw_batch(tenant=tenant, platform="telegram", source=source, batch_id=batch_id(1),
                                 fmt="telegram", method="api", run_id="r1", lines=MESSAGES)
    normalize_batch(lake, batch, lake.table_part(TABLE, tenant, "telegram", source, batch.manifest.batch_id))
    write_relations(lake, tenant, "telegram", source)
    x_source = X_SOURCE.replace("acme", tenant, 1)
    write_part(lake, [record("x:10", "an X post #news", tenant=tenant, source=x_source, author="900",
                             hashtags=["news"]),
                      record("x:11", "its reply", tenant=tenant, source=x_source, author="901", reply_to="x:10")],
               batch_id(1), tenant=tenant, source=x_source)
    write_relations(lake, tenant, "x", x_source)
    return lake
