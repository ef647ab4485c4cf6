"""The normalize stage: raw batches into Parquet parts (``batch.py``), and the stage over a source (``stage.py``)."""
