"""Model text on its way into another language: matplotlib labels.

Ids and titles come from the model file. In a matplotlib label, a pair of ``$`` starts
mathtext (a model could make drawing fail or show something else); control characters could
garble the figure. :func:`mpl_text` escapes both; line breaks the engine puts in a label stay.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def mpl_text(text: object) -> str:
    """``text`` as a literal matplotlib label: ``$`` escaped, control characters (other than
    line breaks) written as escapes."""
    s = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))
    return s.replace("$", r"\$")
