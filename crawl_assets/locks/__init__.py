"""Every lock of the project: ``files`` (``flock`` lock files, dropped by the kernel when a holder dies),
``shared`` (named exclusive locks across machines: Postgres advisory locks when the instance is on Postgres,
else lock files) and ``sources`` (one sync of a source at a time, re-entrant in a process)."""
