"""Discourse forums: posts, topics with all their posts, categories and tags (public JSON API)."""
