"""One folder per source type: client, raw asset factory, normalizer."""
