"""Discourse answers in shapes our goldens lacked (issue 14 item 13)."""

from __future__ import annotations

import orjson

from crawl_assets_tests.normalize.helpers import run

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
    assert other.media == [] and ":smile:" in other.text, "avatars and emoji are not the post's media"


def test_discourse_video_and_attachment_are_media():
    cooked = ('<div class="video-placeholder-container" data-video-src="/uploads/default/original/1X/clip.mp4"></div>'
              '<p><a class="attachment" href="/uploads/short-url/log.txt">log.txt</a> (2.1 KB)</p>')  # fmt: skip
    records, _ = run("discourse", _discourse(_post(4, cooked)))
    assert [(m.type, m.url) for m in records[0].media] == [
        ("video", f"https://{HOST}/uploads/default/original/1X/clip.mp4"),
        ("document", f"https://{HOST}/uploads/short-url/log.txt")]
