"""Intercom: conversations of a workspace (REST API), their parts as records."""
