"""Persian as a first-class language of search and analysis: word lemmas (``lemma``, its word lists in
``lexicon``) and the Jalali calendar (``jalali``). Plain functions on strings and dates, importing nothing of
crawl_assets: kept out of ``normalize`` so that a word-list change re-derives no normalized part."""
