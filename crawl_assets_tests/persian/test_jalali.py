"""Our Jalali calendar against jdatetime, every day of 1390-1410, and its bucket boundaries in a time zone."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import jdatetime

from crawl_assets.persian.jalali import boundaries, from_jalali, is_leap, label, to_jalali


def test_every_day_of_1390_to_1410_agrees_with_jdatetime() -> None:
    day, last = jdatetime.date(1390, 1, 1).togregorian(), jdatetime.date(1410, 12, 29).togregorian()
    checked = 0
    while day <= last:
        theirs = jdatetime.date.fromgregorian(date=day)
        assert to_jalali(day) == (theirs.year, theirs.month, theirs.day), day
        assert from_jalali(theirs.year, theirs.month, theirs.day) == day
        day += timedelta(days=1)
        checked += 1
    assert checked > 7600
    assert [y for y in range(1390, 1411) if is_leap(y)] == [y for y in range(1390, 1411) if jdatetime.date(y, 1, 1).isleap()]


def test_month_boundaries_are_local_midnights_of_the_first_of_each_month() -> None:
    tehran = ZoneInfo("Asia/Tehran")
    start = datetime(2024, 3, 19, 21, 0, tzinfo=timezone.utc)  # 1403-01-01 00:30 in Tehran
    cuts = boundaries(start, datetime(2024, 5, 30, tzinfo=timezone.utc), "month", tehran)
    assert [label(c, "month", tehran) for c in cuts] == ["1403-01", "1403-02", "1403-03", "1403-04"]
    assert cuts[0].astimezone(timezone.utc) == datetime(2024, 3, 19, 20, 30, tzinfo=timezone.utc)
    assert [label(c, "year", tehran) for c in boundaries(start, start, "year", tehran)] == ["1403", "1404"]
    assert label(cuts[1], "hour", tehran) == "1403-02-01T00:00"
