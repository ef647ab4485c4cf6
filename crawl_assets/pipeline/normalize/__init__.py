"""The normalize stage: raw batches into Parquet parts, and the stage over a source (``stage.py``; the rows of
a part and their keys: ``part.py``)."""
