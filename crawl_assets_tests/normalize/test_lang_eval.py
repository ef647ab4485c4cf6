"""Language identification meets its goals on our labelled set (bench/lang_eval.py prints the full table)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from crawl_assets.normalize.lang import ISO_639_1, MIN_LETTERS, SHORT_LETTERS, detect_lang
from crawl_assets.normalize.lang import host_script
from crawl_assets_tests.normalize.helpers import CONTEXT, run
from crawl_assets_tests.normalize.lang_eval import LANGUAGES, load
from crawl_assets_tests.normalize.shapes import lines, telethon_message


def test_goals_on_the_labelled_set():
    samples = load()
    assert len(samples) >= 600 and all(len(s.text) <= 120 for s in samples)
    answers = [detect_lang(s.text) for s in samples]
    long = [(s, a) for s, a in zip(samples, answers) if s.expected and s.letters >= 20]
    fa_ar = [(s, a) for s, a in long if s.expected in ("fa", "ar")]
    assert sum(a == s.expected for s, a in long) / len(long) >= 0.95
    assert sum(a == s.expected for s, a in fa_ar) / len(fa_ar) >= 0.98
    for lang in LANGUAGES:  # every language is recognized, not only the set as a whole
        mine = [(s, a) for s, a in long if s.expected == lang]
        assert sum(a == lang for s, a in mine) / len(mine) >= 0.9, lang
    assert all(a is None for s, a in zip(samples, answers) if s.expected is None)


def test_english_titles_are_english():
    titles = ["Annual Report for Members", "Contributor Guidelines Draft", "Bug Report: Login Fails on Safari",
              "Plugin Development Guide", "Memory Leak in the Parser", "Data Export Request Still Pending"]
    assert [detect_lang(t) for t in titles] == ["en"] * len(titles)


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(max_size=80))
def test_never_a_label_outside_iso_639_1_and_null_only_for_too_little_text(text):
    """Null means too little text, or a short Latin-script text the model only guesses at."""
    answer = detect_lang(text)
    assert answer is None or answer in ISO_639_1
    import re

    body = re.sub(r"(?:https?://|www\.)\S+|[@#＠＃][\w\u200c]+", " ", text)
    letters = sum(1 for ch in body if ch.isalpha())
    if letters >= MIN_LETTERS and (letters >= SHORT_LETTERS or host_script(body, letters) != "LATIN"):
        assert answer is not None


def test_a_source_may_name_its_languages():
    assert detect_lang("Sale ends Friday") == "en"
    assert detect_lang("Sale ends Friday", languages=("fr", "fa")) == "fr", "the source's languages win"
    assert detect_lang("Привет всем друзьям", languages=("en", "fa")) == "ru", "no named language fits the script"
    import dataclasses

    records, _ = run("telegram", lines(telethon_message(1, "Crash on Startup")),
                     dataclasses.replace(CONTEXT, languages=("en",)))
    assert records[0].lang == "en"


def test_the_bench_fails_loudly_when_a_baseline_is_missing(tmp_path):
    """A baseline that cannot be imported fails the bench (exit 2, named); with it installed (the dev extra)
    the same run compares it."""
    import subprocess
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[2] / "bench" / "lang_eval.py"
    (tmp_path / "langdetect.py").write_text("raise ImportError('hidden for the test', name='langdetect')\n")

    def run_bench(*env_path: str) -> subprocess.CompletedProcess:
        import os

        env = {**os.environ, "PYTHONPATH": os.pathsep.join(env_path)}
        return subprocess.run([sys.executable, str(bench), "--only", "langdetect", "--long-only"], capture_output=True, text=True,
                              timeout=600, env=env)

    hidden = run_bench(str(tmp_path))
    assert hidden.returncode == 2 and "NOT INSTALLED" in hidden.stdout and "langdetect" in hidden.stderr
    installed = run_bench()
    assert installed.returncode == 0, installed.stderr
    assert "langdetect" in installed.stdout and "NOT INSTALLED" not in installed.stdout


def test_short_texts_do_not_regress():
    """A fifth of the short-text sets (bench/lang_short/; the bench prints the whole and the goals): floors a
    little under today's figures per language and over all, and few wrong labels (a null is not one)."""
    from crawl_assets_tests.normalize.lang_eval import SHORT_LANGUAGES, load_short

    samples = load_short()[::5]
    answers = [detect_lang(s.text) for s in samples]
    floors = {"fa": 0.95, "ar": 0.95, "ur": 0.93, "ru": 0.93, "uk": 0.87, "be": 0.87, "en": 0.93, "tr": 0.88,
              "de": 0.9, "fr": 0.85, "es": 0.85}
    assert sum(a == s.expected for s, a in zip(samples, answers)) / len(samples) >= 0.93
    for lang in SHORT_LANGUAGES:
        mine = [a for s, a in zip(samples, answers) if s.expected == lang]
        assert len(mine) >= 50, lang
        assert sum(a == lang for a in mine) / len(mine) >= floors[lang], (lang, sorted(map(str, mine)))
        if lang in ("fa", "ar", "en", "tr", "de", "es"):
            assert sum(a is not None and a != lang for a in mine) / len(mine) <= 0.08, (lang, mine)
    fa_ar = sum(1 for s, a in zip(samples, answers) if {s.expected, a} == {"fa", "ar"})
    assert fa_ar <= 3
