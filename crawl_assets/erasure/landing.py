"""Erasure in the landing area: pushed webhook events are raw observations too (an Intercom notification
holds a whole conversation: every participant's text, names and emails). Each event of the source that
holds anything of the subject is rewritten without it (atomically), or removed when all of it was theirs."""

from __future__ import annotations

import orjson

from crawl_assets.erasure.scrub import DROP, Subject, scrub
from crawl_assets.lake import Lake
from crawl_assets.lake.landing import landing_events


def erase_landed(lake: Lake, tenant: str, platform: str, source: str, subject: Subject) -> int:
    """Scrub ``subject`` out of the source's landed events; how many events were rewritten or removed."""
    changed = 0
    for path, data in lake.files(landing_events(tenant, platform, source)):
        if not subject.may_occur_in(data):
            continue
        try:
            envelope = orjson.loads(data)
        except orjson.JSONDecodeError:
            continue  # not ours to judge: the webhook receiver only lands JSON
        response = envelope.get("response") if isinstance(envelope, dict) else None
        kept = scrub(response, subject)
        if kept == response:
            continue
        changed += 1
        if kept is DROP:
            lake.remove(path)
            continue
        envelope["response"] = kept
        lake.write_bytes(path, orjson.dumps(envelope) + b"\n")
    return changed
