"""The ``export_file`` source type, for every platform that declares export formats: a file the user already has,
under the tenant's import root, stored once per content (``collect``) and counted in records (``stats``)."""
