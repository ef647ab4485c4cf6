"""Pure: find personal data in a text: e-mail addresses, phone numbers, payment card and IBAN-like numbers.

Spans are ``(type, start, end)`` in code points of the text (Python string indices). Digits may be Latin
(0-9), Persian (۰-۹) or Arabic-Indic (٠-٩), mixed too; the checks run on the digits' values.

The rules are conservative (a false alarm redacts a harmless number; a miss keeps a real one, so both
matter, and ids must not read as phone numbers):

* **email**: ``local@domain.tld`` (ASCII; the usual characters of a local part).
* **card**: 13-19 digits, optionally in groups split by one space or dash, first digit 2-6 (the issuer
  ranges of payment cards: Visa, Mastercard, Amex, Discover, JCB, UnionPay, Iranian Shetab cards),
  and a valid Luhn check digit.
* **iban**: two letters, two check digits, 11-30 letters or digits (single spaces allowed between groups),
  valid ISO 13616 mod-97 checksum (``== 1``). Iranian Sheba numbers (``IR`` + 24 digits) are IBANs.
* **phone**: 9-15 digits, optionally starting with ``+`` or ``(``, in groups split by spaces, dashes, dots
  or parentheses. A bare run of digits counts only when it starts with ``0`` or ``+`` (``09121234567``,
  ``+989121234567``): a plain long number is far more often an id, an amount or a timestamp. Dotted
  quads (IPv4 addresses) are not phones. A card number wins over a phone reading of the same digits.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_D = "0-9\u06f0-\u06f9\u0660-\u0669"
_DIGIT = f"[{_D}]"
_TO_ASCII = str.maketrans({**{0x06F0 + d: str(d) for d in range(10)}, **{0x0660 + d: str(d) for d in range(10)}})

_ANY_DIGIT = re.compile(_DIGIT)
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?){0,8}"
    r"\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"
)
# A run of digits with short separators between them (phones and cards); validated afterwards.
# (run on the text with ASCII digits: ``\w`` still keeps it from starting or ending inside a word)
_NUMBER = re.compile(r"(?<![\w+])(?:\+|\(\+?)?[0-9](?:[ \t().\-]{0,2}[0-9]){8,22}(?!\w)")
_IBAN = re.compile(rf"(?<![A-Za-z0-9{_D}])[A-Za-z]{{2}}{_DIGIT}{{2}}(?: ?[A-Za-z0-9{_D}]){{11,30}}(?![A-Za-z0-9{_D}])")
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
# a Gregorian or Solar Hijri date (2024-05-01, 1403.02.15) inside the digits: a date and time, not a phone
_DATE = re.compile(r"(?<!\d)(?:19|20|13|14)\d\d[-.](?:0?[1-9]|1[0-2])[-.](?:0?[1-9]|[12]\d|3[01])(?!\d)")
# digits grouped by thousands (1 250 000 000): an amount, unless dialled (+ or a leading 0)
_THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:[ .]\d{3})+")
_CARD_SEPARATORS = re.compile(r"[ \-]")

TYPES = ("email", "phone", "card", "iban")
LABELS = {"email": "[email]", "phone": "[phone]", "card": "[card]", "iban": "[iban]"}


class Span(NamedTuple):
    type: str
    start: int
    end: int


def ascii_digits(text: str) -> str:
    return text.translate(_TO_ASCII)


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_ok(value: str) -> bool:
    """ISO 13616: the country letters and check digits moved to the end, letters as 10-35, mod 97 == 1."""
    compact = ascii_digits(value).replace(" ", "").upper()
    if not (15 <= len(compact) <= 34 and compact[:2].isalpha() and compact[2:4].isdigit() and compact.isalnum()):
        return False
    rotated = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in rotated)
    return int(number) % 97 == 1


def _card(candidate: str) -> bool:
    if "(" in candidate or ")" in candidate or "+" in candidate or "." in candidate or "\t" in candidate:
        return False
    digits = _CARD_SEPARATORS.sub("", candidate)
    if not digits.isdigit() or not 13 <= len(digits) <= 19 or digits[0] not in "23456":
        return False
    if any(len(group) < 3 for group in _CARD_SEPARATORS.split(candidate)):  # "12 34 5..." is not a card layout
        return False
    return luhn_ok(digits)


def _phone(candidate: str) -> bool:
    if _IPV4.fullmatch(candidate):
        return False
    digits = "".join(ch for ch in candidate if ch.isdigit())
    if not 9 <= len(digits) <= 15:
        return False
    if candidate.count("(") != candidate.count(")"):
        return False
    if candidate.isdigit():  # a bare run: only a dialled form (a trunk or international prefix)
        return candidate[0] == "0"
    return not (_DATE.search(candidate) or _THOUSANDS.fullmatch(candidate))


def _iban_spans(text: str, taken: list[tuple[int, int]]) -> list[Span]:
    out = []
    for found in _IBAN.finditer(text):
        value, start = found.group(), found.start()
        # greedy single-space groups may take the next word: give back trailing groups until it checks
        while value and not iban_ok(value):
            cut = value.rfind(" ")
            if cut < 15:
                value = ""
                break
            value = value[:cut]
        if value and not _overlaps(start, start + len(value), taken):
            out.append(Span("iban", start, start + len(value)))
            taken.append((start, start + len(value)))
    return out


def _overlaps(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in taken)


def find_personal_data(text: str | None) -> list[Span]:
    """Every e-mail, phone, card and IBAN-like number in ``text``, in order of position."""
    if not text:
        return []
    spans: list[Span] = []
    taken: list[tuple[int, int]] = []
    if "@" in text:
        for found in _EMAIL.finditer(text):
            spans.append(Span("email", found.start(), found.end()))
            taken.append(found.span())
    if _ANY_DIGIT.search(text) is None:
        return spans
    spans += _iban_spans(text, taken)
    ascii_text = ascii_digits(text)  # same length: one code point per digit either way
    for found in _NUMBER.finditer(ascii_text):
        start, end = found.span()
        if _overlaps(start, end, taken):
            continue
        candidate = found.group()
        kind = "card" if _card(candidate) else "phone" if _phone(candidate) else None
        if kind is not None:
            spans.append(Span(kind, start, end))
            taken.append((start, end))
    spans.sort(key=lambda s: s.start)
    return spans


def redact(text: str, spans: list[Span]) -> str:
    """``text`` with each span replaced by its type label (``[email]``, ``[phone]``, ``[card]``, ``[iban]``)."""
    out, last = [], 0
    for span in sorted(spans, key=lambda s: s.start):
        if span.start < last:
            continue
        out.append(text[last:span.start])
        out.append(LABELS[span.type])
        last = span.end
    out.append(text[last:])
    return "".join(out)
