"""X (Twitter): API v2 response pages and account archives."""
