"""The classifier hook: label each record's text (sentiment, topic, ...) with a model the user provides.

The interface a model meets: given a list of texts, ``predict_proba(texts)`` returns one row of class
probabilities per text, in the order of ``classes_``. A scikit-learn ``Pipeline`` that starts with a text
vectorizer meets it as is. Models load only from a local path under the models root (``CRAWL_MODELS``, default
``$DAGSTER_HOME/models``; a relative ``model`` is relative to it), as regular files of at most
``MAX_MODEL_BYTES`` together (checked when the enricher is configured, without reading them), and only in a
run, never when the code location loads (nothing is downloaded):

* ``*.skops``: a scikit-learn pipeline saved with ``skops.io.dump``. skops refuses to build objects of types
  it does not trust; types outside its default list must be named in ``trusted_types`` (after reading
  ``skops.io.get_untrusted_types(file=...)`` yourself);
* ``*.joblib`` / ``*.pkl``: only with ``allow_pickle: true``: unpickling runs code from the file, so use it
  only for files you made;
* a directory holding ``config.json``: a Hugging Face sequence-classification model, loaded with
  ``transformers`` (not a dependency of crawl_assets: install ``transformers`` and ``torch`` to use it), with
  ``local_files_only``.

The model's bytes are part of the enricher's stamp, so a retrained model re-labels everything and nothing
else does. Without ``model`` the shipped baseline (``models/sentiment_baseline.skops``: positive, negative,
neutral, Persian, Arabic and English: character n-grams beside lexicon features (``sentiment_lexicon.py``),
trained by ``python -m crawl_assets.enrich.models.train_baseline`` from the labelled sets beside it; its
measured figures are in ``models/sentiment_baseline.json``) is used; its one type outside skops' defaults is
ours and trusted for that file only.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np
import pyarrow as pa

from crawl_assets import settings
from crawl_assets.enrich.base import CombineContext, Enricher, record_feature
from crawl_assets.enrich.columns import CONTEXT_COLUMNS, CONTEXT_FIELDS, context, record_documents

MODELS = Path(__file__).parent / "models"
BASELINE = MODELS / "sentiment_baseline.skops"
BASELINE_TRUSTED = ["crawl_assets.enrich.sentiment_lexicon.LexiconFeatures"]  # our own class, in the shipped file
MAX_MODEL_BYTES = 4 << 30  # a model's files together (a large Hugging Face model is ~1.5 GB)
MAX_MODEL_FILES = 10_000  # files of a model directory
SCORE = pa.struct([pa.field("label", pa.string()), pa.field("score", pa.float32())])
PICKLE_SUFFIXES = (".joblib", ".pkl", ".pickle")


class ClassifierError(ValueError):
    """The model cannot be loaded or used; the message says why and what to do."""


class TextModel(Protocol):
    classes_: Sequence[str]

    def predict_proba(self, texts: list[str]) -> Any: ...


class _HuggingFace:
    """A local Hugging Face text-classification model behind the same interface."""

    def __init__(self, path: Path) -> None:
        try:
            from transformers import pipeline  # type: ignore[import-not-found]
        except ImportError as exc:
            raise ClassifierError(f"{path} is a Hugging Face model directory; install transformers and torch "
                                  "to use it (pip install transformers torch)") from exc
        self._pipe = pipeline("text-classification", model=str(path), tokenizer=str(path), top_k=None,
                              truncation=True, local_files_only=True)
        self.classes_ = [self._pipe.model.config.id2label[i] for i in sorted(self._pipe.model.config.id2label)]

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), len(self.classes_)))
        position = {label: i for i, label in enumerate(self.classes_)}
        # the pipeline's own batch_size: the model sees the hook's batch at once (not one text per call)
        for row, scores in enumerate(self._pipe(texts, batch_size=max(len(texts), 1))):
            for item in scores:
                out[row, position[item["label"]]] = item["score"]
        return out


def load_model(path: Path, *, allow_pickle: bool = False, trusted_types: Sequence[str] = ()) -> TextModel:
    """The model at ``path`` (see the module docstring for the formats); ``ClassifierError`` says why not."""
    if not path.exists():
        raise ClassifierError(f"model {path} does not exist")
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ClassifierError(f"{path} is a directory without config.json: not a Hugging Face model")
        return _HuggingFace(path)
    if path.suffix == ".skops":
        import skops.io as sio

        untrusted = sorted(set(sio.get_untrusted_types(file=path)) - set(trusted_types))
        if untrusted:
            raise ClassifierError(f"{path} holds types skops does not trust by default: {', '.join(untrusted)}; "
                                  "if you made this file, list them in the classifier's 'trusted_types'")
        model = sio.load(path, trusted=list(trusted_types) or None)
    elif path.suffix in PICKLE_SUFFIXES:
        if not allow_pickle:
            raise ClassifierError(f"{path} is a pickle: loading it runs code from the file. Set 'allow_pickle: "
                                  "true' only for a file you made, or save the model with skops.io.dump")
        import joblib

        model = joblib.load(path)
    else:
        raise ClassifierError(f"{path}: unknown model format (expected .skops, .joblib/.pkl, or a Hugging Face "
                              "model directory)")
    if not hasattr(model, "predict_proba") or not hasattr(model, "classes_"):
        raise ClassifierError(f"{path}: the model has no predict_proba/classes_ (a fitted classifier is needed)")
    return model


def model_files(path: Path, root: Path | None) -> list[Path]:
    """The files of the model at ``path`` (a file, or a Hugging Face directory's files), checked without reading
    them: under ``root`` once links are resolved (None: the shipped baseline), regular files, at most
    ``MAX_MODEL_FILES`` of at most ``MAX_MODEL_BYTES`` together. ``ValueError`` says what is wrong."""
    where = f"classifier: model {path}"
    if not os.path.lexists(path):
        raise ValueError(f"{where} does not exist")
    real = Path(os.path.realpath(path))
    if root is not None:
        real_root = os.path.realpath(root)
        if os.path.commonpath([str(real), real_root]) != real_root:
            raise ValueError(f"{where} is not under the models root {root} (set CRAWL_MODELS, or put the model there)")
    try:
        info = os.stat(real)
        if stat.S_ISDIR(info.st_mode):
            files: list[Path] = []
            for folder, dirs, names in os.walk(real, onerror=_raise):
                dirs.sort()
                files += [Path(folder) / n for n in sorted(names)]
                if len(files) > MAX_MODEL_FILES:
                    raise ValueError(f"{where}: more than {MAX_MODEL_FILES} files")
        else:
            files = [real]
        total = 0
        for file in files:
            resolved = os.path.realpath(file)
            if root is not None and os.path.commonpath([resolved, os.path.realpath(root)]) != os.path.realpath(root):
                raise ValueError(f"{where}: {file} leads outside the models root {root}")
            file_info = os.stat(resolved)
            if not stat.S_ISREG(file_info.st_mode):
                raise ValueError(f"{where}: {file} is not a regular file")
            total += file_info.st_size
    except OSError as exc:
        raise ValueError(f"{where} cannot be read: {exc.strerror or exc}") from None
    if total > MAX_MODEL_BYTES:
        raise ValueError(f"{where}: {total} bytes, over the bound of {MAX_MODEL_BYTES}")
    return files


def _raise(exc: OSError) -> None:
    raise exc


class Classifier(Enricher):
    name: ClassVar[str] = "classifier"
    version: ClassVar[str] = "2"  # 2: the shipped sentiment model v2 (lexicon features; fa, ar, en)
    columns: ClassVar[tuple[str, ...]] = (*CONTEXT_COLUMNS, "text_clean")
    description: ClassVar[str] = "Labels from a user-provided model (scikit-learn via skops or joblib, or a " \
                                 "local Hugging Face model); the shipped baseline labels sentiment."

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._model: TextModel | None = None

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {"model": "", "task": "sentiment", "batch_size": 1000, "allow_pickle": False, "trusted_types": []}

    def validate(self) -> None:
        p = self.params
        if not (isinstance(p["batch_size"], int) and p["batch_size"] >= 1):
            raise ValueError("classifier: 'batch_size' must be a positive integer")
        if not isinstance(p["task"], str) or not p["task"].replace("_", "").isalnum():
            raise ValueError("classifier: 'task' must be a word (letters, digits, _)")
        if not isinstance(p["model"], str):
            raise ValueError("classifier: 'model' must be a path")
        if not (isinstance(p["trusted_types"], list) and all(isinstance(t, str) and len(t) <= 300 for t in p["trusted_types"])
                and len(p["trusted_types"]) <= 1000):
            raise ValueError("classifier: 'trusted_types' must be a list of type names")
        self._files = model_files(self.model_path, None if self.model_path == BASELINE else settings.models_root())

    @property
    def model_path(self) -> Path:
        if not self.params["model"]:
            return BASELINE
        path = Path(self.params["model"]).expanduser()
        return path if path.is_absolute() else settings.models_root() / path

    def model_files(self) -> list[Path]:
        if self.model_path == BASELINE:  # the shipped model runs our lexicon features: their code is part of it
            from crawl_assets.enrich import sentiment_lexicon

            return [*self._files, Path(sentiment_lexicon.__file__)]
        return self._files

    def hashed_params(self) -> dict[str, Any]:
        # the model is identified by its bytes (model_files), not by where it lies
        return {**self.params, "model": self.model_path.name}

    def model(self) -> TextModel:
        if self._model is None:
            trusted = list(self.params["trusted_types"])
            if self.model_path == BASELINE:
                trusted += BASELINE_TRUSTED
            self._model = load_model(self.model_path, allow_pickle=self.params["allow_pickle"], trusted_types=trusted)
        return self._model

    @property
    def part_schema(self) -> pa.Schema:
        return self.stamped_schema([*CONTEXT_FIELDS, pa.field("task", pa.string()), pa.field("label", pa.string()),
                                    pa.field("score", pa.float32()), pa.field("scores", pa.list_(SCORE)),
                                    pa.field("model", pa.string())])

    def extract(self, records: pa.Table) -> pa.Table:
        texts = records.column("text_clean").to_pylist()
        rows = [i for i, t in enumerate(texts) if t and t.strip()]
        model = self.model()
        classes = [str(c) for c in model.classes_]
        labels, best, scores = [], [], []
        size = self.params["batch_size"]
        for start in range(0, len(rows), size):
            batch = [texts[i] for i in rows[start:start + size]]
            proba = np.asarray(model.predict_proba(batch), dtype=float)
            top = proba.argmax(axis=1)
            labels += [classes[j] for j in top]
            best += proba[np.arange(len(batch)), top].tolist()
            scores += [[{"label": c, "score": round(float(s), 4)} for c, s in zip(classes, row)] for row in proba]
        n = len(rows)
        return self.table(self.part_schema, {**context(records, rows), "task": [self.params["task"]] * n,
                                             "label": labels, "score": best, "scores": pa.array(scores, pa.list_(SCORE)),
                                             "model": [f"{self.model_path.name}#{self.stamp.rsplit('+', 1)[1]}"] * n})

    def documents(self, table: str, rows: pa.Table, context: CombineContext | None) -> Iterator[dict[str, Any]]:
        for ref, payload in record_documents(rows, ("task", "label", "score", "scores", "model")):
            payload["score"] = round(payload["score"], 4)
            payload["scores"] = {s["label"]: round(s["score"], 4) for s in payload["scores"]}
            yield record_feature(self, ref, classifier=payload)
