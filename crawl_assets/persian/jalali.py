"""The Jalali (Solar Hijri) calendar: dates both ways and month, quarter and year boundaries.

Year starts (Nowruz) follow Borkowski's arithmetic of the 33-year cycles with the table of cycle breaks
(the algorithm of the widely used ``jalaali`` libraries, exact for Jalali years -61 to 3177). The first six
months have 31 days, the next five 30, Esfand 29 (30 in a leap year). Checked day by day against jdatetime
for 1390-1410.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, tzinfo
from functools import lru_cache

_BREAKS = (-61, 9, 38, 199, 426, 686, 756, 818, 1111, 1181, 1210, 1635, 2060, 2097, 2192, 2262, 2324, 2394, 2456,
           3178)


@lru_cache(maxsize=4096)
def nowruz(jy: int) -> date:
    """The Gregorian date of 1 Farvardin of Jalali year ``jy``."""
    if not _BREAKS[0] <= jy < _BREAKS[-1]:
        raise ValueError(f"Jalali year {jy} is outside {_BREAKS[0]}..{_BREAKS[-1] - 1}")
    gy = jy + 621
    leap_j, jp = -14, _BREAKS[0]
    jump = 0
    for jm in _BREAKS[1:]:
        jump = jm - jp
        if jy < jm:
            break
        leap_j += jump // 33 * 8 + jump % 33 // 4
        jp = jm
    n = jy - jp
    leap_j += n // 33 * 8 + (n % 33 + 3) // 4
    if jump % 33 == 4 and jump - n == 4:
        leap_j += 1
    leap_g = gy // 4 - (gy // 100 + 1) * 3 // 4 - 150
    return date(gy, 3, 20 + leap_j - leap_g)


def is_leap(jy: int) -> bool:
    return (nowruz(jy + 1) - nowruz(jy)).days == 366


def to_jalali(day: date) -> tuple[int, int, int]:
    """(year, month, day) of a Gregorian date."""
    jy = day.year - 621
    if day < nowruz(jy):
        jy -= 1
    days = (day - nowruz(jy)).days
    if days < 186:
        return jy, days // 31 + 1, days % 31 + 1
    days -= 186
    return jy, days // 30 + 7, days % 30 + 1


def from_jalali(jy: int, jm: int, jd: int) -> date:
    """The Gregorian date of a Jalali date (checked: a day past the month's end is an error)."""
    length = 31 if jm <= 6 else 30 if jm <= 11 else 30 if is_leap(jy) else 29
    if not 1 <= jm <= 12 or not 1 <= jd <= length:
        raise ValueError(f"{jy}-{jm:02d}-{jd:02d} is not a Jalali date")
    offset = (jm - 1) * 31 if jm <= 7 else 186 + (jm - 7) * 30
    return nowruz(jy) + timedelta(days=offset + jd - 1)


STEP_MONTHS = {"month": 1, "quarter": 3, "year": 12}


def boundaries(start: datetime, end: datetime, interval: str, zone: tzinfo) -> list[datetime]:
    """Local midnights (in ``zone``) that start each Jalali month, quarter or year from the one holding
    ``start`` through the one holding ``end``, then the start of the next: ``len - 1`` buckets."""
    step = STEP_MONTHS[interval]
    jy, jm, _ = to_jalali(start.astimezone(zone).date())
    jm = (jm - 1) // step * step + 1
    out: list[datetime] = []
    while True:
        first = datetime.combine(from_jalali(jy, jm, 1), datetime.min.time(), zone)
        out.append(first)
        if first > end:
            return out
        jm += step
        if jm > 12:
            jy, jm = jy + 1, jm - 12


def label(moment: datetime, interval: str, zone: tzinfo) -> str:
    """The Jalali name of the bucket starting at ``moment``: ``1403`` (year), ``1403-Q2``, ``1403-07`` (month),
    ``1403-07-15`` (week, day), with ``THH:MM`` for hours and minutes."""
    local = moment.astimezone(zone)
    jy, jm, jd = to_jalali(local.date())
    if interval == "year":
        return f"{jy:04d}"
    if interval == "quarter":
        return f"{jy:04d}-Q{(jm - 1) // 3 + 1}"
    if interval == "month":
        return f"{jy:04d}-{jm:02d}"
    day = f"{jy:04d}-{jm:02d}-{jd:02d}"
    return f"{day}T{local:%H:%M}" if interval in ("hour", "minute") else day
