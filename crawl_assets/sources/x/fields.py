"""The expansions and fields every X request asks for: what the ``x-v2`` normalizer reads.

One place, so a timeline page, a search page and a parent lookup all carry the same shape: authors
(``author_id``), what a post replies to or quotes and who wrote that (``referenced_tweets.id``,
``referenced_tweets.id.author_id``), mentioned users, media, long-post text (``note_tweet``) and
edit history.
"""

from __future__ import annotations

EXPANSIONS = (
    "author_id",
    "referenced_tweets.id",
    "referenced_tweets.id.author_id",
    "entities.mentions.username",
    "attachments.media_keys",
    "in_reply_to_user_id",
    "edit_history_tweet_ids",
)
TWEET_FIELDS = (
    "id", "text", "author_id", "created_at", "conversation_id", "in_reply_to_user_id", "referenced_tweets",
    "entities", "attachments", "lang", "public_metrics", "note_tweet", "edit_history_tweet_ids",
    "edit_controls", "possibly_sensitive", "reply_settings",
)
USER_FIELDS = (
    "id", "name", "username", "created_at", "description", "location", "protected", "verified",
    "public_metrics", "profile_image_url", "url",
)
MEDIA_FIELDS = (
    "media_key", "type", "url", "preview_image_url", "alt_text", "width", "height", "duration_ms",
    "public_metrics",
)


def post_params() -> dict[str, str]:
    """Query parameters that make a response carry everything the normalizer needs."""
    return {
        "expansions": ",".join(EXPANSIONS),
        "tweet.fields": ",".join(TWEET_FIELDS),
        "user.fields": ",".join(USER_FIELDS),
        "media.fields": ",".join(MEDIA_FIELDS),
    }
