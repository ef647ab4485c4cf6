"""Personal-data detection: planted e-mails, phones in three digit systems, cards and IBANs are found with
their exact spans; ids, dates, amounts and addresses that only look numeric are not."""

from __future__ import annotations

import pytest

from crawl_assets.enrich.pii import PersonalData, redacted_records
from crawl_assets.enrich.pii_rules import find_personal_data, iban_ok, luhn_ok, redact
from crawl_assets_tests.enrich.records import record, table


def _iban(country: str, bban: str) -> str:
    """A valid IBAN for ``bban`` (check digits computed as ISO 13616 says)."""
    number = int("".join(str(int(c, 36)) for c in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


def _card(first15: str) -> str:
    """``first15`` with the Luhn check digit that makes it valid."""
    return next(first15 + d for d in "0123456789" if luhn_ok(first15 + d))


SHETAB = _card("603799741234567")
PERSIAN = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
SHEBA = _iban("IR", "062960000000100324200001")
GERMAN = _iban("DE", "370400440532013000")

PLANTED = [
    # (text, [(type, the exact text of the span)])
    ("contact sara.k+news@example.co.uk today", [("email", "sara.k+news@example.co.uk")]),
    ("call +98 912 345 6789 after 5", [("phone", "+98 912 345 6789")]),
    ("شماره‌ام " + "09123456789".translate(PERSIAN) + " است", [("phone", "09123456789".translate(PERSIAN))]),
    ("اتصل على " + "0912 345 6789".translate(ARABIC) + " الآن", [("phone", "0912 345 6789".translate(ARABIC))]),
    ("mixed ۰۹۱۲-345-6789 digits", [("phone", "۰۹۱۲-345-6789")]),
    ("US office (555) 123-4567.", [("phone", "(555) 123-4567")]),
    (f"pay to {SHETAB[:4]} {SHETAB[4:8]} {SHETAB[8:12]} {SHETAB[12:]} please",
     [("card", f"{SHETAB[:4]} {SHETAB[4:8]} {SHETAB[8:12]} {SHETAB[12:]}")]),
    ("کارت " + SHETAB.translate(PERSIAN), [("card", SHETAB.translate(PERSIAN))]),
    ("card 4111111111111111", [("card", "4111111111111111")]),
    (f"شبا {SHEBA} واریز کنید", [("iban", SHEBA)]),
    (f"IBAN {GERMAN[:4]} {GERMAN[4:8]} {GERMAN[8:12]} {GERMAN[12:16]} {GERMAN[16:20]} {GERMAN[20:]} thanks",
     [("iban", " ".join([GERMAN[:4], GERMAN[4:8], GERMAN[8:12], GERMAN[12:16], GERMAN[16:20], GERMAN[20:]]))]),
    ("mail a@b.io or call 021-8877-6655", [("email", "a@b.io"), ("phone", "021-8877-6655")]),
]

DECOYS = [
    "tweet 1789012345678901234 got 250000 likes",
    "on 2026-03-01 10:30 and 1403/12/11",
    "price 1 250 000 000 rials",
    "server 192.168.100.200 is down",
    "card 4111111111111112 fails Luhn",
    "order #12345678 shipped",
    "IBAN DE00 3704 0044 0532 0130 00 has a bad checksum",
    "version 3.2.1 released",
    "@sara_k and #news_2026",
]


@pytest.mark.parametrize(("text", "expected"), PLANTED)
def test_planted_personal_data_is_found_with_exact_spans(text, expected):
    found = [(s.type, text[s.start:s.end]) for s in find_personal_data(text)]
    assert found == expected


@pytest.mark.parametrize("text", DECOYS)
def test_numbers_that_are_not_personal_data_are_left_alone(text):
    assert find_personal_data(text) == []


def test_checksums():
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert iban_ok(SHEBA) and iban_ok(SHEBA.translate(PERSIAN).replace("IR", "IR", 1))
    assert not iban_ok(SHEBA[:-1] + ("0" if SHEBA[-1] != "0" else "1"))


def test_redaction_replaces_each_span_with_its_type():
    text = "write a@b.io or ۰۹۱۲۳۴۵۶۷۸۹"
    assert redact(text, find_personal_data(text)) == "write [email] or [phone]"


def test_enricher_rows_hold_spans_not_values_and_only_for_records_with_findings():
    rows = [record("x:1", "call ۰۹۱۲۳۴۵۶۷۸۹ now"), record("x:2", "nothing here"),
            record("x:3", "mail me: a@b.io, card 4111 1111 1111 1111")]
    out = PersonalData().extract(table(rows))
    assert out.column("key").to_pylist() == ["x:1", "x:3"]
    got = out.to_pylist()
    assert got[0]["types"] == ["phone"] and got[1]["types"] == ["card", "email"]
    # spans on the observed text and on text_clean (where the Persian digits are ASCII)
    assert {(s["field"], s["type"], s["start"], s["end"]) for s in got[0]["spans"]} == {
        ("text", "phone", 5, 16), ("text_clean", "phone", 5, 16)}
    assert all(r["inferred"] and r["enricher"] == "personal_data" and r["enricher_version"].startswith("personal_data/1+")
               for r in got)
    assert got[0]["text_clean_redacted"] is None, "the redacted view is opt-in"
    values = str(out.drop_columns(["text_clean_redacted"]).to_pylist())
    assert "a@b.io" not in values and "4111" not in values and "09123456789" not in values


def test_opt_in_redacted_view():
    rows = [record("x:1", "call ۰۹۱۲۳۴۵۶۷۸۹ now"), record("x:2", "nothing here")]
    out = PersonalData(redacted_view=True).extract(table(rows))
    assert out.column("text_clean_redacted").to_pylist() == ["call [phone] now"]
    view = redacted_records(rows, out)
    assert [v["text_clean"] for v in view] == ["call [phone] now", "nothing here"]
    assert all("text" not in v for v in view)


def test_types_can_be_narrowed_and_bad_parameters_are_named():
    rows = [record("x:1", "a@b.io ۰۹۱۲۳۴۵۶۷۸۹")]
    assert PersonalData(types=["email"]).extract(table(rows)).column("types").to_pylist() == [["email"]]
    assert PersonalData(types=["email"]).stamp != PersonalData().stamp
    with pytest.raises(ValueError, match="types"):
        PersonalData(types=["ssn"])
    with pytest.raises(ValueError, match="unknown parameter"):
        PersonalData(redact=True)
