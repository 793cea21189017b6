"""``KeyIndex``: a string column's rows found by key with a few bytes a row, no Python object per row.

Used where every fact (or entity, or label) must be found by its id while its columns stay Arrow: the
side tables of ``validate-benchmark`` (``factatlas.validation``) and the analyses' facts
(``factatlas.tables.FactTable``). A dict of 126,336 fact ids holds about 120 bytes a fact in Python; this holds
16 (a 64-bit hash and a row number), and confirms each hit against the row's own key."""

from __future__ import annotations

from array import array
from bisect import bisect_left


class KeyIndex:
    """Exact lookup of a string column's rows by key without a Python object per row: the keys' 64-bit
    hashes, sorted, beside the rows they came from; a hit is confirmed against the row's own key."""

    def __init__(self, keys) -> None:  # a pyarrow string Array
        self.keys = keys
        hashes = array("q")
        for start in range(0, len(keys), 65536):
            hashes.extend(hash(k) for k in keys.slice(start, 65536).to_pylist())
        order = sorted(range(len(hashes)), key=hashes.__getitem__)
        self.hashes = array("q", (hashes[i] for i in order))
        self.rows = array("q", order)

    def __len__(self) -> int:
        return len(self.rows)

    def find(self, key: str) -> int:
        """The first row whose key is ``key``, else -1."""
        h = hash(key)
        i = bisect_left(self.hashes, h)
        while i < len(self.hashes) and self.hashes[i] == h:
            if self.keys[self.rows[i]].as_py() == key:
                return self.rows[i]
            i += 1
        return -1

    def has_duplicates(self) -> bool:
        hashes = self.hashes
        return any(hashes[i] == hashes[i - 1] and self.keys[self.rows[i]].as_py() == self.keys[self.rows[i - 1]].as_py()
                   for i in range(1, len(hashes)))
