"""The relate stage (``stage.py``): a source's edge files and co-occurrence tables, rebuilt or by what is new, from
its normalized parts read in Arrow (``parts.py``; the edge rules: ``normalize/edges.py``)."""
