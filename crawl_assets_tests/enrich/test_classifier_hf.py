"""The classifier hook on a Hugging Face model directory: a tiny BERT, randomly initialised, with a WordLevel
tokenizer built here (nothing downloaded), saved with ``save_pretrained``. The hook loads it from the local
path, labels in batches of ``batch_size``, gives the model's own probabilities, and stamps the enricher
version with the hash of the directory's files (a changed weight file is a new stamp; a moved copy is not).

Needs the optional ``hf`` extra (``transformers``, ``torch``): skipped without it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from crawl_assets.enrich.classifier import Classifier
from crawl_assets_tests.enrich.records import record, table

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

LABELS = ["negative", "neutral", "positive"]
TEXTS = ["the delivery was late again", "thanks the support was great", "قطعی برق امروز ادامه دارد",
         "the app update fixed the login bug", "price report for today"]


@pytest.fixture(autouse=True)
def models_root(tmp_path, monkeypatch):
    """The test's models live in its folder: make it the models root (CRAWL_MODELS)."""
    monkeypatch.setenv("CRAWL_MODELS", str(tmp_path))


def _tiny_model(path: Path, seed: int) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    words = sorted({w for text in TEXTS for w in text.split()})
    vocab = {token: i for i, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *words])}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]",
                                                cls_token="[CLS]", sep_token="[SEP]", model_max_length=32)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32, max_position_embeddings=32, num_labels=len(LABELS),
                                     id2label=dict(enumerate(LABELS)), label2id={k: i for i, k in enumerate(LABELS)})
    torch.manual_seed(seed)
    model = transformers.BertForSequenceClassification(config).eval()
    fast.save_pretrained(path)
    model.save_pretrained(path)
    return path


def test_a_local_hugging_face_directory_labels_in_batches_with_the_models_probabilities(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # nothing may be fetched: everything is in the directory
    path = _tiny_model(tmp_path / "tiny-bert", seed=0)
    enricher = Classifier(model=str(path), task="topic", batch_size=2)
    model = enricher.model()
    assert list(model.classes_) == LABELS

    batches: list[int] = []
    model._pipe.model.register_forward_pre_hook(lambda _, args, kwargs: batches.append(len(kwargs["input_ids"])),
                                                with_kwargs=True)
    rows = [record(f"x:{i}", text) for i, text in enumerate(TEXTS)] + [record("x:empty", "")]
    out = enricher.extract(table(rows)).to_pylist()
    assert [r["key"] for r in out] == [f"x:{i}" for i in range(len(TEXTS))], "one row per record with text"
    assert batches == [2, 2, 1], "the model sees batches of batch_size texts"
    assert {r["task"] for r in out} == {"topic"} and all(r["enricher_version"] == enricher.stamp for r in out)

    fast = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    direct = transformers.AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True).eval()
    for row, text in zip(out, TEXTS):
        with torch.no_grad():
            proba = direct(**fast(text, return_tensors="pt")).logits.softmax(-1)[0].tolist()
        assert [s["label"] for s in row["scores"]] == LABELS
        assert [s["score"] for s in row["scores"]] == pytest.approx(proba, abs=1e-4)
        assert row["label"] == LABELS[max(range(3), key=proba.__getitem__)]
        assert row["score"] == pytest.approx(max(proba), abs=1e-5)


def test_the_stamp_is_the_directorys_content_hash(tmp_path):
    first = _tiny_model(tmp_path / "a", seed=0)
    moved = tmp_path / "elsewhere" / "a"
    shutil.copytree(first, moved)
    retrained = _tiny_model(tmp_path / "b" / "a", seed=1)  # same name and config, other weights
    stamp = Classifier(model=str(first)).stamp
    assert Classifier(model=str(moved)).stamp == stamp, "where the model lies is not part of its identity"
    assert Classifier(model=str(retrained)).stamp != stamp, "new weights: a new stamp (re-derives every label)"
    assert Classifier(model=str(first), task="topic").stamp != stamp
    weights = [p.name for p in Classifier(model=str(first)).model_files()]
    assert "config.json" in weights and any(n.endswith((".safetensors", ".bin")) for n in weights)
