"""Discourse answers in shapes our goldens lacked (issue 14 item 13; issue 29 item 4)."""

from __future__ import annotations

import orjson

from crawl_assets.normalize.edges import record_edges
from crawl_assets_tests.normalize.helpers import run
from crawl_assets_tests.normalize.shapes import discourse_onebox, discourse_post, discourse_quote

HOST = "forum.example.org"
# Discourse ``cooked`` of an upload as Discourse renders it: a lightbox around the optimized image, the
# original behind the link, and a caption of file name and size (the UI's, not the author's text).
LIGHTBOX = (
    '<p><div class="lightbox-wrapper"><a class="lightbox" href="/uploads/default/original/2X/a/abc123.jpeg" '
    'data-download-href="/uploads/default/abc123" title="screenshot"><img src="/uploads/default/optimized/2X/a/'
    'abc123_2_690x388.jpeg" alt="screenshot" data-base62-sha1="x9" width="690" height="388" '
    'srcset="/uploads/default/optimized/2X/a/abc123_2_1035x582.jpeg 1.5x"><div class="meta"><svg class="fa '
    'd-icon d-icon-far-image svg-icon" aria-hidden="true"><use href="#far-image"></use></svg><span '
    'class="filename">screenshot</span><span class="informations">1920×1080 152 KB</span><svg class="fa '
    'd-icon d-icon-discourse-expand svg-icon" aria-hidden="true"><use href="#discourse-expand"></use></svg>'
    "</div></a></div></p>"
)  # fmt: skip
PLAIN_IMAGE = '<p><img src="/uploads/default/original/1X/def456.png" alt="image" width="500" height="300"></p>'


def _post(post_id: int, cooked: str) -> dict:
    return {"id": post_id, "name": "Bob", "username": "bob", "user_id": 107, "created_at": "2026-11-01T00:07:00.000Z",
            "updated_at": "2026-11-01T00:07:00.000Z", "cooked": cooked, "post_number": post_id, "post_type": 1,
            "reply_count": 0, "reply_to_post_number": None, "quote_count": 0, "reads": 3, "topic_id": 1001,
            "topic_slug": "topic-1", "version": 1, "user_deleted": False, "deleted_at": None, "wiki": False,
            "actions_summary": []}  # fmt: skip


def _discourse(*posts: dict) -> bytes:
    line = {"crawl": {"endpoint": "posts", "host": HOST, "retrieved_at": "2026-11-30T04:00:00+00:00"},
            "response": {"latest_posts": list(posts)}}
    return orjson.dumps(line) + b"\n"


def test_image_only_discourse_post_keeps_the_image():
    quoted = ('<aside class="quote" data-post="1"><div class="title"><img alt="" width="24" height="24" '
              'src="/user_avatar/forum/bob/48/1.png" class="avatar"> bob:</div><blockquote><p>hi</p></blockquote>'
              '</aside><p>see <img src="/images/emoji/twitter/smile.png?v=12" title=":smile:" class="emoji" '
              'alt=":smile:"></p>')  # fmt: skip
    records, rejections = run("discourse", _discourse(_post(1, LIGHTBOX), _post(2, PLAIN_IMAGE), _post(3, quoted)))
    assert not rejections
    lightbox, plain, other = records
    assert lightbox.text == "" and [(m.type, m.url, m.width, m.height) for m in lightbox.media] == [
        ("photo", f"https://{HOST}/uploads/default/original/2X/a/abc123.jpeg", 690, 388)]
    assert lightbox.urls == [], "the upload is media, not a link"
    assert [(m.type, m.url) for m in plain.media] == [("photo", f"https://{HOST}/uploads/default/original/1X/def456.png")]
    assert other.media == [] and other.text == "see 😄", "avatars and emoji are not the post's media; a quote is not its text"


def test_discourse_video_and_attachment_are_media():
    cooked = ('<div class="video-placeholder-container" data-video-src="/uploads/default/original/1X/clip.mp4"></div>'
              '<p><a class="attachment" href="/uploads/short-url/log.txt">log.txt</a> (2.1 KB)</p>')  # fmt: skip
    records, _ = run("discourse", _discourse(_post(4, cooked)))
    assert [(m.type, m.url) for m in records[0].media] == [
        ("video", f"https://{HOST}/uploads/default/original/1X/clip.mp4"),
        ("document", f"https://{HOST}/uploads/short-url/log.txt")]


def _topic(topic_id: int, *posts: dict) -> dict:
    return {"crawl": {"endpoint": "topic", "host": HOST, "retrieved_at": "2026-11-30T04:00:00+00:00"},
            "response": {"id": topic_id, "title": f"Topic {topic_id}", "slug": f"topic-{topic_id}", "category_id": 5,
                         "post_stream": {"posts": list(posts), "stream": [p["id"] for p in posts]}}}


def test_discourse_quote_is_a_relation_not_text():
    """Issue 29 item 4: the quoted words and author stay out of text; quote_of is the post of the right topic."""
    same = discourse_post(30, 1001, 3, discourse_quote("alice", 1001, 2, "The original words") + "<p>I agree with this</p>")
    other = discourse_post(31, 1001, 4, discourse_quote("carol", 1002, 2, "Elsewhere", other_topic="topic-1002")
                           + "<p>Same as there</p>")
    later = discourse_post(32, 1001, 5, discourse_quote("dave", 1003, 1, "Not yet seen") + "<p>and this</p>")
    stream = b"".join(orjson.dumps(line) + b"\n" for line in (
        _topic(1001, discourse_post(10, 1001, 1, "<p>Start</p>"), discourse_post(20, 1001, 2, "<p>The original words</p>",
                                                                                   username="alice"), same, other, later),
        _topic(1002, discourse_post(11, 1002, 1, "<p>Other start</p>"), discourse_post(21, 1002, 2, "<p>Elsewhere</p>")),
        _topic(1003, discourse_post(12, 1003, 1, "<p>Not yet seen</p>", username="dave"))))
    records, rejections = run("discourse", stream)
    assert not rejections
    by_id = {r.native_id: r for r in records}
    assert by_id["30"].text == "I agree with this" and by_id["30"].text_clean == "I agree with this"
    assert by_id["30"].quote_of == f"discourse:{HOST}:20"
    assert by_id["31"].quote_of == f"discourse:{HOST}:21", "post 2 of the quoted topic, not of this one"
    assert by_id["32"].quote_of == f"discourse:{HOST}:12", "a quoted post later in the stream is waited for"
    assert by_id["30"].metadata["quoted_posts"] == [{"topic_id": 1001, "post_number": 2, "username": "alice"}]
    assert ("quote", f"discourse:{HOST}:30", f"discourse:{HOST}:20") in {e[:3] for e in record_edges(by_id["30"])}


def test_discourse_link_preview_is_the_link_once_and_emoji_are_emoji():
    cooked = ('<p>Worth reading <img src="https://emoji.discourse-cdn.com/twitter/+1/3.png?v=12" title=":+1:t3:" '
              'class="emoji" alt=":+1:t3:" loading="lazy" width="20" height="20"></p>\n'
              + discourse_onebox("https://example.com/article", "Article title") + '<p>custom <img src="/uploads/e.png" '
              'title=":party_parrot:" class="emoji emoji-custom" alt=":party_parrot:"></p>')  # fmt: skip
    records, _ = run("discourse", _discourse(discourse_post(40, 1001, 6, cooked)))
    (post,) = records
    assert post.text == "Worth reading 👍🏼\nhttps://example.com/article\ncustom :party_parrot:"
    assert post.urls == ["https://example.com/article"] and post.media == []
