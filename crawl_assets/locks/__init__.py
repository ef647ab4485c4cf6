"""Every lock of the project, in ``shared``: named exclusive locks (``flock`` files on one machine, dropped by
the kernel when a holder dies, or Postgres advisory locks across machines when the instance is on Postgres;
``exclusive``, the registry file's write lock) and ``source_lock`` (one sync of a source at a time, re-entrant
in a process)."""
