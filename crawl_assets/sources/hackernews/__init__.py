"""Hacker News through the Algolia search API (the fourth source, added by following docs/ADDING_A_SOURCE.md)."""
