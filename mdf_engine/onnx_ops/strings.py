"""ONNX text operators StringNormalizer and TfIdfVectorizer (``python_only`` kernels).

StringNormalizer removes ``stopwords`` (compared exactly when ``is_case_sensitive`` is 1, else
case-insensitively) from a ``[C]`` or ``[1, C]`` string tensor and applies
``case_change_action`` (NONE, LOWER, UPPER). If every string is removed the output holds one
empty string (shape ``[1]`` or ``[1, 1]``). Note: ``locale`` is accepted and ignored; case
changes use Python's locale-independent Unicode ``str.lower``/``str.upper``.

TfIdfVectorizer counts n-grams of a ``[C]`` or ``[N, C]`` tensor of ints or strings against a pool
(``pool_int64s`` or ``pool_strings``): ``ngram_counts[k]`` is where the (k+1)-grams start in the
pool, ``ngram_indexes`` gives each pooled n-gram's output column. n-grams of length
``min_gram_length`` .. ``max_gram_length`` are formed with every skip 0 .. ``max_skip_count``
between consecutive items (unigrams are counted once per position). ``mode`` TF gives counts,
IDF gives ``weights`` (default 1) where the count is non-zero, TFIDF gives ``count * weight``.
Output is float32 ``[max(ngram_indexes) + 1]`` or ``[N, ...]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from . import onnx_op


@onnx_op(
    "StringNormalizer",
    inputs=("X",),
    attributes={
        "case_change_action": "NONE",
        "is_case_sensitive": 0,
        "locale": "",
        "stopwords": None,
    },
    outputs=("Y",),
    since=10,
    python_only=True,
)
def string_normalizer(
    X: Any,
    *,
    case_change_action: str = "NONE",
    is_case_sensitive: int = 0,
    locale: str = "",
    stopwords: Any = None,
) -> tuple:
    """Stopword removal and case change of a 1-D or ``[1, C]`` string tensor."""
    x = np.asarray(X, dtype=object)
    if x.ndim == 2 and x.shape[0] == 1:
        two_d = True
    elif x.ndim == 1:
        two_d = False
    else:
        raise MDFError(f"StringNormalizer: X must be [C] or [1, C], got shape {x.shape}")
    action = str(case_change_action).upper()
    if action not in ("NONE", "LOWER", "UPPER"):
        raise MDFError(
            f"StringNormalizer: case_change_action must be NONE, LOWER or UPPER, "
            f"got '{case_change_action}'"
        )
    words = [w.decode("utf-8") if isinstance(w, bytes) else str(w) for w in x.reshape(-1)]
    stops = [str(s) for s in (stopwords or [])]
    if is_case_sensitive:
        stopset = set(stops)
        kept = [w for w in words if w not in stopset]
    else:
        stopset = {s.casefold() for s in stops}
        kept = [w for w in words if w.casefold() not in stopset]
    if action == "LOWER":
        kept = [w.lower() for w in kept]
    elif action == "UPPER":
        kept = [w.upper() for w in kept]
    if not kept:
        kept = [""]
    out = np.empty(len(kept), dtype=object)
    out[:] = kept
    return (out.reshape(1, -1) if two_d else out,)


def _pool_ngrams(
    pool: list, ngram_counts: list[int], ngram_indexes: list[int], max_n: int
) -> dict[tuple, int]:
    """``{n-gram tuple: output column}`` from the flat pool."""
    table: dict[tuple, int] = {}
    k = 0
    bounds = list(ngram_counts) + [len(pool)]
    for level in range(len(ngram_counts)):
        n = level + 1
        start, end = bounds[level], bounds[level + 1]
        if (end - start) % n:
            raise MDFError(
                f"TfIdfVectorizer: pool section for {n}-grams has {end - start} "
                f"items, not a multiple of {n}"
            )
        for p in range(start, end, n):
            if k >= len(ngram_indexes):
                raise MDFError(
                    "TfIdfVectorizer: ngram_indexes has fewer entries than the pool has n-grams"
                )
            table[tuple(pool[p : p + n])] = int(ngram_indexes[k])
            k += 1
    return table


@onnx_op(
    "TfIdfVectorizer",
    inputs=("X",),
    attributes={
        "max_gram_length": None,
        "max_skip_count": None,
        "min_gram_length": None,
        "mode": None,
        "ngram_counts": None,
        "ngram_indexes": None,
        "pool_int64s": None,
        "pool_strings": None,
        "weights": None,
    },
    outputs=("Y",),
    since=9,
    python_only=True,
)
def tfidf_vectorizer(
    X: Any,
    *,
    max_gram_length: Any = None,
    max_skip_count: Any = None,
    min_gram_length: Any = None,
    mode: Any = None,
    ngram_counts: Any = None,
    ngram_indexes: Any = None,
    pool_int64s: Any = None,
    pool_strings: Any = None,
    weights: Any = None,
) -> tuple:
    """n-gram TF / IDF / TFIDF vectors of each row of ``X``."""
    for name, v in (
        ("max_gram_length", max_gram_length),
        ("max_skip_count", max_skip_count),
        ("min_gram_length", min_gram_length),
        ("mode", mode),
        ("ngram_counts", ngram_counts),
        ("ngram_indexes", ngram_indexes),
    ):
        if v is None:
            raise MDFError(f"TfIdfVectorizer needs attribute '{name}'")
    mode = str(mode).upper()
    if mode not in ("TF", "IDF", "TFIDF"):
        raise MDFError(f"TfIdfVectorizer: mode must be TF, IDF or TFIDF, got '{mode}'")
    if (pool_int64s is None) == (pool_strings is None):
        raise MDFError("TfIdfVectorizer: give exactly one of pool_int64s and pool_strings")
    lo, hi, skip = int(min_gram_length), int(max_gram_length), int(max_skip_count)
    if not 1 <= lo <= hi:
        raise MDFError(
            f"TfIdfVectorizer: need 1 <= min_gram_length <= max_gram_length, got {lo}, {hi}"
        )
    x = np.asarray(X)
    if pool_strings is not None:
        pool = [str(s) for s in pool_strings]
        conv = lambda v: v.decode("utf-8") if isinstance(v, bytes) else str(v)  # noqa: E731
    else:
        pool = [int(v) for v in pool_int64s]
        conv = int
    table = _pool_ngrams(pool, list(ngram_counts), list(ngram_indexes), hi)
    width = int(max(ngram_indexes)) + 1 if len(ngram_indexes) else 0
    w = (
        np.ones(width, dtype=np.float64)
        if weights is None
        else np.asarray(weights, dtype=np.float64)
    )
    col_weight = np.ones(width, dtype=np.float64)
    for k, col in enumerate(ngram_indexes):
        if weights is not None and k < len(w):
            col_weight[int(col)] = w[k]
    if x.ndim == 1:
        rows = [x]
    elif x.ndim == 2:
        rows = list(x)
    else:
        raise MDFError(f"TfIdfVectorizer: X must be [C] or [N, C], got shape {x.shape}")
    out = np.zeros((len(rows), width), dtype=np.float64)
    for r, row in enumerate(rows):
        items = [conv(v) for v in row]
        L = len(items)
        for n in range(lo, hi + 1):
            skips = range(skip + 1) if n > 1 else range(1)
            for s in skips:
                step = s + 1
                span = (n - 1) * step
                for i in range(L - span):
                    col = table.get(tuple(items[i : i + span + 1 : step]))
                    if col is not None:
                        out[r, col] += 1.0
    if mode == "IDF":
        out = np.where(out > 0, col_weight, 0.0)
    elif mode == "TFIDF":
        out = out * col_weight
    out = out.astype(np.float32)
    return (out[0] if x.ndim == 1 else out,)
