"""Function words left out of trend terms (English, Persian, Arabic): words so frequent in every window that
their rises say nothing. Short lists written for this project; casefolded, Persian in ``text_clean``'s
letter forms (ی, ک), with and without ZWNJ where both spellings are common."""

from __future__ import annotations

import pyarrow as pa

ENGLISH = """
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few
for from further get got had hadn't has hasn't have haven't having he her here hers herself him himself his how
i if in into is isn't it it's its itself just let's like me more most much my myself new no nor not now of off
on once one only or other our ours ourselves out over own really said same say says she should shouldn't so some
still such than that that's the their theirs them themselves then there these they this those through to too
under until up us very via was wasn't we were weren't what when where which while who whom why will with won't
would wouldn't yes yet you your yours yourself yourselves amp http https www com rt
""".split()

PERSIAN = """
از به با در که این آن را و یا هم تا برای بر اما اگر چون چه چرا کجا کی هر همه هیچ نیز باید شاید
است هست نیست بود بودن شد شده شود می‌شود میشود کرد کرده کند می‌کند میکند کنند می‌کنند میکنند کردن
خود خودش ما من تو او شما ایشان آنها اینها آنان ایشان دیگر دیگری یک یکی چند چندین خیلی بسیار
روی زیر پیش پس بین میان درباره مورد طور گونه همین همان چنین چنان وقتی زمانی حتی فقط تنها
ولی لیکن بلکه زیرا پیش‌از پس‌از بعد قبل الان اکنون امروز دیروز فردا اینجا آنجا اینکه آنکه
های‌ ها هایی ای‌ ام ات اش مان تان شان نه آره بله خب ولی‌ رو دارد دارند داشت داشته ندارد
""".split()

ARABIC = """
في من إلى على عن مع هذا هذه ذلك تلك التي الذي الذين هو هي هم نحن أنت أنا كان كانت يكون لم لن لا ما
قد ثم أو أم بل لكن إن أن كل بعض غير بين حتى عند منذ هناك هنا كما أيضا فقط
""".split()

STOPWORDS = pa.array(sorted({w.casefold() for w in ENGLISH + PERSIAN + ARABIC}), pa.string())
