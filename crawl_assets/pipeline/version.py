"""The version stamped on every derived Parquet part, declared by hand.

Bump it when the records or edges the normalizer derives change (a fixed rule, a new field, another
format's output); a part stamped with another version is re-derived from raw at the next materialization,
so a fix reaches old data without collecting again. Edits that change no output (a docstring, a rename)
keep the version and re-derive nothing. The golden test of declared versions fails when the output changes
under an unchanged version.
"""

from __future__ import annotations

NORMALIZER_VERSION = "2026.12.6"
