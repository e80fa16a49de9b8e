"""Hierarchical code lists of a table column (docs/tables.md, "Hierarchical code lists").

A hierarchy maps every code to its parent: a root's parent is none (it lies directly under the
grand total ``Total``). It is given as a file of ``code,parent`` rows (CSV), a JSON object
``{"code": "parent", ...}`` (``null`` or ``""`` for a root), or as prefix lengths
(:class:`Prefixes`: ``2,4`` puts "0301" under "03"). Of a table column, the **leaves** are the
data's codes and the **inner nodes** their ancestors in the hierarchy; the table then has a row
for every inner node on that axis and, for an inner node q, x_q = Σ_{c child of q} x_c in every
combination with the other axes (sdc_core/tables/crosstab.py).

Every code is data: it is read as text and compared as text, never evaluated. Refused, in one
sentence each: a file past :data:`MAX_BYTES`, more than :data:`MAX_CODES` codes, a code or a
parent that is not text (a number, a list, an object; ``null`` only as a parent), a blank code,
a code longer than :data:`MAX_CODE_LENGTH` or holding a control character, a code named twice,
the code ``Total``, a parent that is not a code of the hierarchy (an orphan), a cycle, a depth
past :data:`MAX_DEPTH`; and, against the data, a data code absent from the hierarchy or a data
code that is an inner node (its records would belong to none of its children: give them a child
code of their own, e.g. "03" → "03.0").
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from sdc_core.checks import parse_json, shown
from sdc_core.errors import SdcInputError

#: The label of the grand total (sdc_core/tables/crosstab.py's TOTAL, which imports this module)
ROOT = "Total"
#: The most codes a hierarchy may hold
MAX_CODES = 100_000
#: The most levels under the grand total (a root is at depth 1)
MAX_DEPTH = 20
#: The longest code, in characters
MAX_CODE_LENGTH = 200
#: The largest hierarchy file, in bytes (checked before it is decoded)
MAX_BYTES = 8_000_000


@dataclass(frozen=True)
class Hierarchy:
    """A checked code list (module docstring): ``parent`` maps each code to its parent code,
    or to None for a root (directly under the grand total). Made by :func:`hierarchy`.

    Examples
    --------
    >>> h = hierarchy([("0301", "03"), ("0302", "03"), ("03", None)])
    >>> h.depth("0301"), sorted(h.inner)
    (2, ['03'])
    """

    parent: Mapping[str, str | None]

    @property
    def inner(self) -> frozenset[str]:
        """The codes that are a parent of some code."""
        return frozenset(p for p in self.parent.values() if p is not None)

    def depth(self, code: str) -> int:
        """1 for a root, one more per level below."""
        d = 0
        node: str | None = code
        while node is not None:
            d += 1
            node = self.parent[node]
        return d

    def for_codes(self, column: str, codes: Sequence[str]) -> Hierarchy:
        """This hierarchy, checked against a column's data codes: each must be a code of it
        and none an inner node."""
        inner = self.inner
        for c in codes:
            if c not in self.parent:
                raise SdcInputError(f"column {shown(column)} has the code {shown(c)}, which "
                                    "its hierarchy does not hold")
            if c in inner:
                raise SdcInputError(f"column {shown(column)} has the code {shown(c)}, which its "
                                    "hierarchy gives children: a record's code must be a leaf "
                                    "(give its records a child code of their own)")
        return self


@dataclass(frozen=True)
class Prefixes:
    """Levels written as prefixes of a code: with ``lengths`` (k₁ < k₂ < …), the parent of a
    code c is its longest prefix c[:k] with k among the lengths and k < len(c); a code no
    longer than k₁ is a root.

    Examples
    --------
    >>> h = Prefixes((2, 4)).for_codes("nace", ["0301", "0302", "0410"])
    >>> dict(h.parent)
    {'0301': '03', '03': None, '0302': '03', '0410': '04', '04': None}
    """

    lengths: tuple[int, ...]

    def __post_init__(self) -> None:
        ks = self.lengths
        if not ks or len(ks) > MAX_DEPTH or any(
                isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_CODE_LENGTH
                for k in ks) or list(ks) != sorted(set(ks)):
            raise SdcInputError(f"prefix lengths must be 1 to {MAX_DEPTH} increasing whole "
                                f"numbers from 1 to {MAX_CODE_LENGTH}, e.g. 2,4; not "
                                f"{shown(ks)}")

    def for_codes(self, column: str, codes: Sequence[str]) -> Hierarchy:
        """The hierarchy of the data's ``codes`` (checked as :meth:`Hierarchy.for_codes`)."""
        pairs: dict[str, str | None] = {}
        for c in codes:
            node = c
            for k in reversed(self.lengths):
                if k < len(node):
                    pairs[node] = node[:k]
                    node = node[:k]
            pairs.setdefault(node, None)
        return hierarchy(pairs.items()).for_codes(column, codes)


def _code(value: object, what: str, row: int) -> str:
    """A code as text, or one sentence why not."""
    if not isinstance(value, str):
        raise SdcInputError(f"hierarchy entry {row}: the {what} must be text, not "
                            f"{type(value).__name__} {shown(value)}")
    text = value.strip()
    if not text:
        raise SdcInputError(f"hierarchy entry {row}: the {what} is blank")
    if len(text) > MAX_CODE_LENGTH:
        raise SdcInputError(f"hierarchy entry {row}: the {what} is longer than "
                            f"{MAX_CODE_LENGTH} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise SdcInputError(f"hierarchy entry {row}: the {what} {shown(text)} holds a control "
                            "character")
    if text == ROOT:
        raise SdcInputError(f"hierarchy entry {row}: the code {ROOT!r} is the label of the "
                            "grand total")
    return text


def hierarchy(pairs: Iterable[tuple[object, object]]) -> Hierarchy:
    """A :class:`Hierarchy` from (code, parent) pairs, parent None or blank for a root,
    checked (module docstring).

    Raises
    ------
    SdcInputError
        Too many codes, a code or parent not text, a duplicate, an orphan, a cycle or a depth
        past :data:`MAX_DEPTH`.
    """
    parent: dict[str, str | None] = {}
    for row, (code, up) in enumerate(pairs, start=1):
        if row > MAX_CODES:
            raise SdcInputError(f"the hierarchy holds more than {MAX_CODES:,} codes")
        c = _code(code, "code", row)
        p = None if up is None or (isinstance(up, str) and not up.strip()) \
            else _code(up, "parent", row)
        if c in parent:
            raise SdcInputError(f"hierarchy entry {row}: the code {shown(c)} is given twice")
        parent[c] = p
    if not parent:
        raise SdcInputError("the hierarchy holds no code")
    for c, p in parent.items():
        if p is not None and p not in parent:
            raise SdcInputError(f"the parent {shown(p)} of code {shown(c)} is not a code of the "
                                "hierarchy (give it a row of its own, with a blank parent "
                                "for a root)")
    depth: dict[str, int] = {}
    for c in parent:  # each code's depth once, following its parents to one already known
        path: list[str] = []
        on_path: set[str] = set()
        node: str | None = c
        while node is not None and node not in depth:
            if node in on_path:
                raise SdcInputError(f"the hierarchy has a cycle through the code {shown(node)}")
            path.append(node)
            on_path.add(node)
            node = parent[node]
        base = 0 if node is None else depth[node]
        for i, n in enumerate(reversed(path)):
            depth[n] = base + i + 1
        if depth[c] > MAX_DEPTH:
            raise SdcInputError(f"the hierarchy is deeper than {MAX_DEPTH} levels (at the code "
                                f"{shown(c)})")
    return Hierarchy(parent)


def read_hierarchy(raw: bytes, name: str) -> Hierarchy:
    """A hierarchy file's bytes (``name`` ending in ``.json``: a JSON object code → parent;
    else CSV rows ``code,parent`` with an optional header ``code,parent``), bounded by
    :data:`MAX_BYTES` before it is decoded.

    Examples
    --------
    >>> dict(read_hierarchy(b"code,parent\\n03,\\n0301,03\\n", "h.csv").parent)
    {'03': None, '0301': '03'}
    >>> dict(read_hierarchy(b'{"03": null, "0301": "03"}', "h.json").parent)
    {'03': None, '0301': '03'}
    """
    if len(raw) > MAX_BYTES:
        raise SdcInputError(f"the hierarchy file is {len(raw):,} bytes; at most {MAX_BYTES:,}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SdcInputError("the hierarchy file is not UTF-8 text") from None
    if name.lower().endswith(".json"):
        return hierarchy(_json_pairs(text))
    return hierarchy(_csv_pairs(text))


def _json_pairs(text: str) -> list[tuple[object, object]]:
    """The (code, parent) pairs of a JSON object, a key given twice refused."""
    def pairs_once(items: list[tuple[str, object]]) -> dict[str, object]:
        out: dict[str, object] = {}
        for k, v in items:
            if k in out:
                raise SdcInputError(f"the hierarchy gives the code {shown(k)} twice")
            out[k] = v
        return out
    value = parse_json(text, "hierarchy", pairs_once)
    if not isinstance(value, dict):
        raise SdcInputError(f"the hierarchy must be a JSON object {{\"code\": \"parent\"}}, not "
                            f"a {type(value).__name__}")
    return list(value.items())


def _csv_pairs(text: str) -> list[tuple[object, object]]:
    """The (code, parent) rows of CSV text; a header ``code,parent`` skipped, a row of other
    than 1 or 2 fields refused."""
    out: list[tuple[object, object]] = []
    try:
        rows = csv.reader(io.StringIO(text, newline=""))
        for i, row in enumerate(rows, start=1):
            if not row or all(not f.strip() for f in row):
                continue
            if len(row) > 2:
                raise SdcInputError(f"hierarchy line {i}: give two fields, code and parent, not "
                                    f"{len(row)}")
            if i == 1 and [f.strip().lower() for f in row] == ["code", "parent"]:
                continue
            out.append((row[0], row[1] if len(row) == 2 else None))
            if len(out) > MAX_CODES:
                raise SdcInputError(f"the hierarchy holds more than {MAX_CODES:,} codes")
    except csv.Error as err:
        raise SdcInputError(f"the hierarchy is not valid CSV ({err})") from None
    return out


#: An axis of a table as a tree: each position's parent position (−1 for the grand total,
#: the last); the leaves (the data's codes) come first, then the inner nodes
Parents = tuple[int, ...]


def flat_parents(n_levels: int) -> Parents:
    """The tree of an axis without a hierarchy: every level under the grand total.

    Examples
    --------
    >>> flat_parents(2)
    (2, 2, -1)
    """
    return (n_levels,) * n_levels + (-1,)


def axis_tree(levels: Sequence[str], h: Hierarchy) -> tuple[tuple[str, ...], Parents]:
    """The inner nodes of an axis whose leaves are ``levels`` (the ancestors of the data's
    codes in ``h``, sorted) and the tree of its positions: the levels, the nodes, the grand
    total (each position's parent; the grand total's −1).

    Examples
    --------
    >>> axis_tree(["0301", "0302", "0410"], Prefixes((2,)).for_codes("c", ["0301", "0302",
    ...                                                                     "0410"]))
    (('03', '04'), (3, 3, 4, 5, 5, -1))
    """
    nodes: set[str] = set()
    for c in levels:
        up = h.parent[c]
        while up is not None and up not in nodes:
            nodes.add(up)
            up = h.parent[up]
    ordered = tuple(sorted(nodes))
    where = {c: i for i, c in enumerate(list(levels) + list(ordered))}
    total = len(where)
    parents = tuple(total if h.parent[c] is None else where[h.parent[c]]  # type: ignore[index]
                    for c in list(levels) + list(ordered)) + (-1,)
    return ordered, parents


def unused_codes(h: Hierarchy | Prefixes, used: Iterable[str]) -> list[str]:
    """The codes of a code list that no record falls under, sorted (they are left out of the
    table); a list by prefixes is made from the data's codes and has none.

    Examples
    --------
    >>> unused_codes(hierarchy([("a", "t"), ("b", "t"), ("t", None), ("u", None)]),
    ...              ["a", "t"])
    ['b', 'u']
    """
    if isinstance(h, Prefixes):
        return []
    return sorted(set(h.parent) - set(used))


def unused_note(hierarchies: Mapping[str, Hierarchy | Prefixes],
                used: Mapping[str, Iterable[str]]) -> str:
    """One sentence naming, per column, how many codes of its list no record falls under and
    the first three ("" when there are none)."""
    parts = []
    for column, h in hierarchies.items():
        left = unused_codes(h, used[column])
        if left:
            first = ", ".join(shown(c) for c in left[:3]) + (", …" if len(left) > 3 else "")
            parts.append(f"{len(left):,} codes of the code list of {shown(column)} have no "
                         f"record and are left out ({first})")
    return "; ".join(parts)


def children(parents: Parents) -> list[list[int]]:
    """Each position's children, in the order of the positions."""
    out: list[list[int]] = [[] for _ in parents]
    for i, p in enumerate(parents):
        if p >= 0:
            out[p].append(i)
    return out


def leaves_under(parents: Parents) -> list[list[int]]:
    """Each position's leaves (positions under another without children of their own), in
    the order of the positions: a leaf's is itself.

    Examples
    --------
    >>> leaves_under((2, 3, 3, -1))  # leaf 0 under node 2; 1 and 2 under the grand total
    [[0], [1], [0], [0, 1]]
    """
    kids = children(parents)
    out: list[list[int]] = [[] for _ in parents]
    for i in range(len(parents)):
        if not kids[i] and parents[i] >= 0:  # a leaf (the grand total of no level is none)
            node = i
            while node >= 0:
                out[node].append(i)
                node = parents[node]
    return out


def path_down(parents: Parents, top: int, leaf: int) -> list[int]:
    """The positions from ``top`` down to ``leaf`` (a leaf under it), both included."""
    path = [leaf]
    while path[-1] != top:
        path.append(parents[path[-1]])
    return path[::-1]


def moves(parents: Parents, i: int, limit: int) -> list[tuple[list[int], list[int]]]:
    """The deviations of one axis that move position ``i`` by +1 and keep every sum of the
    axis (docs/tables.md, "Hierarchical code lists"): signed positions, ``i`` first. The axis's
    values are M·u for the leaves' values u (:func:`aggregation`), so any change of the leaves
    keeps them adding up: for a leaf l under i, u = e_l − e_l' (l' a leaf under a sibling j of
    i) gives +1 on the path from i down to l and −1 on the path from j down to l' (their
    common ancestors unchanged); u = e_l gives +1 on the path from i down to l and on every
    ancestor of i. At most ``limit`` moves, in that order.

    Examples
    --------
    >>> moves((2, 2, -1), 0, 10)  # a flat axis: the other level, or the margin
    [([0, 1], [1, -1]), ([0, 2], [1, 1])]
    >>> moves((2, 2, -1), 2, 10)  # from the margin: a level
    [([2, 0], [1, 1]), ([2, 1], [1, 1])]
    """
    under = leaves_under(parents)
    up = parents[i]
    siblings = [] if up < 0 else [j for j in children(parents)[up] if j != i]
    ancestors = []
    node = up
    while node >= 0:
        ancestors.append(node)
        node = parents[node]
    out: list[tuple[list[int], list[int]]] = []
    for leaf in under[i]:
        down = path_down(parents, i, leaf)
        for j in siblings:
            for other in under[j]:
                across = path_down(parents, j, other)
                out.append((down + across, [1] * len(down) + [-1] * len(across)))
                if len(out) >= limit:
                    return out
        out.append((down + ancestors, [1] * (len(down) + len(ancestors))))
        if len(out) >= limit:
            return out
    return out


def chains(parents: Parents, n_leaves: int) -> np.ndarray:
    """Leaves × generations: a leaf's position, its parent's, …, the grand total's, then −1
    (generation g of leaf l is its g-th ancestor)."""
    paths = []
    for leaf in range(n_leaves):
        path, node = [], leaf
        while node >= 0:
            path.append(node)
            node = parents[node]
        paths.append(path)
    width = max((len(p) for p in paths), default=1)
    return np.array([p + [-1] * (width - len(p)) for p in paths], dtype=np.int64).reshape(
        n_leaves, width)


def aggregation(parents: Parents, n_leaves: int) -> sparse.csr_matrix:
    """Positions × leaves: 1 where the leaf is under the position (a leaf under itself), so
    the axis's values are this matrix times its leaves' values.

    Examples
    --------
    >>> aggregation((2, 2, -1), 2).toarray().tolist()
    [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    """
    ch = chains(parents, n_leaves)
    leaf = np.repeat(np.arange(n_leaves), ch.shape[1])
    pos = ch.ravel()
    keep = pos >= 0
    return sparse.csr_matrix((np.ones(int(keep.sum())), (pos[keep], leaf[keep])),
                             shape=(len(parents), n_leaves))


def parse_spec(text: str) -> tuple[str, str]:
    """``COLUMN=FILE`` or ``COLUMN=prefix:2,4`` (the command line's ``--hierarchy``) as
    (column, what follows ``=``)."""
    column, sep, rest = text.partition("=")
    if not sep or not column.strip() or not rest.strip():
        raise SdcInputError(f"--hierarchy takes COLUMN=FILE.csv, COLUMN=FILE.json or "
                            f"COLUMN=prefix:2,4, not {shown(text)}")
    return column.strip(), rest.strip()


def prefixes(text: str) -> Prefixes:
    """Prefix lengths from text such as ``2,4``."""
    try:
        lengths = tuple(int(k) for k in text.split(","))
    except ValueError:
        raise SdcInputError(f"prefix lengths must be whole numbers such as 2,4, not "
                            f"{shown(text)}") from None
    return Prefixes(lengths)
