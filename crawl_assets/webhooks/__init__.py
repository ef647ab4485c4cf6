"""Push: the webhook receiver (``app.create_app``), signature checks, and what it writes to the lake."""
