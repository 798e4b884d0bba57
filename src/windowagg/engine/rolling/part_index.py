"""What an online state (:mod:`.online`) knows of its parts where the key is one integer column:
each part's keys, times and fixed-width columns, laid one after another in arrays grown by
doubling, so that one compiled pass reads every part. The parts merge as a binary counter,
the newest with the one before, so a merge rewrites the end of the arrays in place.

A batch of queries finds each asked key's run in every part by a binary search among the
part's distinct keys (:func:`~windowagg.kernels.key_order.part_runs`), merges the runs key by
key in time order, ties in arrival order (:func:`~windowagg.kernels.key_order.merged_runs`)
as stretches of rows that lie one after another (parts that arrived in about time order
hardly interleave: mostly one stretch per key and part), and copies those stretches of the
fixed-width columns the entries read (:func:`~windowagg.engine.columns.stretched_words`):
each row read once, from where it lies, with no index per row. A compiled call merges the
runs itself, with the one column it reads in the merge's own loop
(:func:`~windowagg.kernels.runs_at.runs_at`); each part keeps that column's span
(:class:`Spans`), which spares the call its passes to find it.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ...kernels.distinct_groups import (
    group_starts,
    key_first_groups,
    merged_groups,
    value_groups,
)
from ...kernels.extremes import BLOCK, extreme_tables
from ...kernels.key_order import merged_runs, part_runs
from ...kernels.order_stats import whole_span
from ...kernels.passes import whole_prefix
from ..columns import EXACT, from_words, stretched_words, word_type, words
from ..memory import empty, read_only

__all__ = [
    "Extremes",
    "Groups",
    "Growing",
    "PartIndex",
    "Prefixes",
    "Runs",
    "Spans",
    "Stretches",
    "flags",
    "runs_of",
]


class Growing:
    """An array grown by doubling, of which the first ``n`` entries hold values."""

    __slots__ = ("data", "n")

    def __init__(self, dtype: npt.DTypeLike) -> None:
        self.data = np.empty(0, dtype)
        self.n = 0

    def view(self) -> np.ndarray:
        return self.data[: self.n]

    def reserve(self, size: int) -> None:
        """Room for ``size`` entries in all."""
        if size > len(self.data):
            grown = np.empty(size, self.data.dtype)
            grown[: self.n] = self.data[: self.n]
            self.data = grown

    def extend(self, x: np.ndarray) -> None:
        self.more(len(x))[:] = x

    def more(self, k: int) -> np.ndarray:
        """``k`` entries more, to be written in place: their view."""
        need = self.n + k
        if need > len(self.data):
            self.reserve(max(need, 2 * len(self.data)))
        self.n = need
        return self.data[need - k : need]


class Prefixes:
    """A column's prefix sums in every part (:mod:`.summaries`), laid one after another: part
    ``p``'s from ``bounds[p] + p``, one more than its rows, so that row ``r`` of part ``p``
    (numbered across the parts) is preceded by ``counts[r + p]`` values. ``counts``: how many
    values (not null) precede each row; ``sums`` (where ``sums``): their exact int64 sum,
    where the part's values are whole numbers that fit (``whole[p]``; zeros where not), and
    ``bound[p]``, its largest magnitude times its rows, which any frame's sum stays within."""

    def __init__(self, sums: bool) -> None:
        self.counts = Growing(np.int64)
        self.sums = Growing(np.int64) if sums else None
        self.whole: list[bool] = []
        self.bound: list[float] = []

    def push(self, values: np.ndarray, valid: np.ndarray | None) -> None:
        """Lay a part's prefixes: its values (float64 or integers where summed; any fixed
        width else), whether each is valid (None: every one)."""
        n = len(values)
        counts = self.counts.more(n + 1)  # written in place, as the sums below
        counts[0] = 0
        if valid is None:
            counts[1:] = np.arange(1, n + 1)
        else:
            np.cumsum(valid, out=counts[1:])
        if self.sums is None:
            return
        x = values if valid is None else np.where(valid, values, 0)
        prefix = self.sums.more(n + 1)
        if x.dtype.kind == "f":
            whole = bool(whole_prefix(read_only(np.ascontiguousarray(x, np.float64)), prefix))
            top = max(-float(x.min()), float(x.max())) if n and whole else 0.0  # no array made
            bound = top * n
        else:  # integers: summed in int64 where no prefix can leave it (Python ints: no wrap)
            most = max(-int(x.min()), int(x.max())) if n else 0
            whole = most * n < 1 << 62
            if whole:
                prefix[0] = 0
                np.cumsum(x, dtype=np.int64, out=prefix[1:])
            bound = float(most * n)
        if not whole:
            prefix.fill(0)
        self.whole.append(whole)
        self.bound.append(bound)

    def pop(self, parts: int, laid: int) -> None:
        """Forget the last ``parts`` parts, ``laid`` entries left."""
        self.counts.n = laid
        if self.sums is not None:
            self.sums.n = laid
            del self.whole[len(self.whole) - parts :]
            del self.bound[len(self.bound) - parts :]

    @property
    def nbytes(self) -> int:
        return sum(a.data.nbytes for a in (self.counts, self.sums) if a is not None)


class Extremes:
    """A column's tables of the rows of its largest (or smallest) values in every part
    (:func:`~windowagg.kernels.extremes.extreme_tables`; :mod:`.summaries`), laid one after
    another: part ``p``'s from ``offs[p]``, levels x blocks of
    :data:`~windowagg.kernels.extremes.BLOCK` rows; ``clean[p]``: whether the part's values
    hold no NaN (else it has no table)."""

    def __init__(self, largest: bool) -> None:
        self.largest = largest
        self.laid = Growing(np.int64)
        self.tops: Growing | None = None  # the rows' values, laid beside them
        self.offs = [0]
        self.clean: list[bool] = []

    def push(self, values: np.ndarray, valid: np.ndarray | None, start: int, end: int) -> None:
        """Lay the table of the part of rows ``start`` to ``end - 1`` of the laid ``values``
        (in their own type) and ``valid`` (None: every row holds a value)."""
        blocks = -(-(end - start) // BLOCK)
        clean = True
        if blocks:
            if self.tops is None:
                self.tops = Growing(values.dtype)
            size = blocks.bit_length() * blocks
            table = self.laid.more(size).reshape(-1, blocks)
            tops = self.tops.more(size).reshape(-1, blocks)
            clean = extreme_tables(values, *flags(valid), self.largest, start, end, table, tops)
            if not clean:  # a NaN: no table
                self.laid.n = self.tops.n = self.offs[-1]
        self.offs.append(self.laid.n)
        self.clean.append(bool(clean))

    def pop(self, parts: int) -> None:
        """Forget the last ``parts`` parts."""
        del self.offs[len(self.offs) - parts :]
        del self.clean[len(self.clean) - parts :]
        self.laid.n = self.offs[-1]
        if self.tops is not None:
            self.tops.n = self.offs[-1]

    @property
    def nbytes(self) -> int:
        return self.laid.data.nbytes + (0 if self.tops is None else self.tops.data.nbytes)


class Groups:
    """A column's rows that hold a value in every part, each part's sorted by key, value and
    row (:func:`~windowagg.kernels.distinct_groups.value_groups`; :mod:`.summaries`), laid
    one after another: ``rows``, and where each group of one key and value starts among them,
    ``groups`` (part ``p``'s from ``goff[p]``, then the end of its rows), for the distinct
    counts of a frame, with each group's value laid beside it (``values``, in the column's
    type; none for the end); and where each of a part's distinct keys has its groups begin,
    ``first``, laid as the index's distinct keys are
    (:func:`~windowagg.kernels.distinct_groups.key_first_groups`)."""

    def __init__(self) -> None:
        self.rows = Growing(np.int64)
        self.groups = Growing(np.int64)
        self.values: Growing | None = None  # in the column's type, from the first part
        self.first = Growing(np.int64)
        self.roff, self.goff = [0], [0]

    def push(
        self,
        keys: np.ndarray,
        values: np.ndarray,
        valid: np.ndarray | None,
        start: int,
        end: int,
        distinct: np.ndarray,
        merged: np.ndarray | None = None,
    ) -> None:
        """Lay the groups of the part of rows ``start`` to ``end - 1`` of the laid ``keys``,
        ``values`` (in their own type) and ``valid`` (None: every row holds a value): sorted
        (:func:`~windowagg.kernels.distinct_groups.value_groups`), or where two parts merged
        into it, their groups' rows ``merged`` (:meth:`merged`), in order already; and where
        the groups of each of its ``distinct`` keys begin."""
        n = end - start
        rows = self.rows.more(n)
        groups = self.groups.more(n + 1)
        if self.values is None:
            self.values = Growing(values.dtype)
        each = self.values.more(n + 1)
        at = self.roff[-1]
        if merged is None:
            work = empty(n, np.int64)
            m, g = value_groups(
                keys, values, *flags(valid), start, end, at, rows, groups, each, work
            )
        else:
            m = len(merged)
            rows[:m] = merged
            g = group_starts(keys, values, rows, m, at, groups, each)
        self.rows.n = at + m
        g0 = self.goff[-1]
        self.groups.n = self.values.n = g0 + g + 1
        self.roff.append(self.rows.n)
        self.goff.append(self.groups.n)
        first = self.first.more(len(distinct))
        key_first_groups(keys, self.rows.view(), self.groups.view(), g0, g0 + g, distinct, first)

    def merged(
        self, keys: np.ndarray, values: np.ndarray, rows: np.ndarray, start: int
    ) -> np.ndarray:
        """The rows of the last two parts' groups (the older's rows from ``start``, the
        newer's after them) as rows of the part they merge into, whose row ``i`` is row
        ``start + rows[i]``, in its groups' order
        (:func:`~windowagg.kernels.distinct_groups.merged_groups`)."""
        laid, roff = self.rows.view(), self.roff
        older, newer = laid[roff[-3] : roff[-2]], laid[roff[-2] : roff[-1]]
        out = empty(len(older) + len(newer), np.int64)
        place = empty(len(rows), np.int64)
        merged_groups(keys, values, older, newer, rows, start, place, out)
        return out

    def pop(self, parts: int, distinct: int) -> None:
        """Forget the last ``parts`` parts, ``distinct`` distinct keys of the parts left."""
        del self.roff[len(self.roff) - parts :]
        del self.goff[len(self.goff) - parts :]
        self.rows.n, self.groups.n = self.roff[-1], self.goff[-1]
        if self.values is not None:
            self.values.n = self.goff[-1]
        self.first.n = distinct

    @property
    def nbytes(self) -> int:
        laid = [self.rows, self.groups, self.first, *([] if self.values is None else [self.values])]
        return sum(a.data.nbytes for a in laid)


class Spans:
    """A float64 or int64 column's span in every part
    (:func:`~windowagg.kernels.order_stats.whole_span`): its smallest and largest value,
    whether some value is not a whole number that converts to int64 exactly, and whether
    some is NaN; over every part (:meth:`known`), what a batch's compiled call
    (:func:`~windowagg.kernels.entries_at.entries_at`) would otherwise find by passes over the
    values it reads, which every part holds."""

    def __init__(self) -> None:
        self.laid: list[tuple[int, int, bool, bool]] = []
        self.over: np.ndarray | None = None  # :meth:`known`, found once after a push or pop

    def push(self, values: np.ndarray, valid: np.ndarray | None, start: int, end: int) -> None:
        """Lay the span of the part of rows ``start`` to ``end - 1`` of the laid ``values``
        (in their own type) and ``valid`` (None: every row holds a value)."""
        rows, _ = flags(None if valid is None else valid[start:end])
        lo, hi, odd, nan = whole_span(values[start:end], rows)
        self.laid.append((int(lo), int(hi), bool(odd), bool(nan)))
        self.over = None

    def pop(self, parts: int) -> None:
        """Forget the last ``parts`` parts."""
        del self.laid[len(self.laid) - parts :]
        self.over = None

    def known(self) -> np.ndarray:
        """Over every part, as :func:`~windowagg.kernels.entries_at.entries_at` takes it:
        whether no value is NaN; whether some value is counted and every one is a whole
        number; then the smallest and the largest (zeros where not); read-only, found once
        after each push or pop."""
        if self.over is not None:
            return self.over
        clean = not any(nan for *_, nan in self.laid)
        lo = min((lo for lo, *_ in self.laid), default=0)
        hi = max((hi for _, hi, *_ in self.laid), default=-1)
        whole = lo <= hi and not any(odd for _, _, odd, _ in self.laid)
        found = np.array([clean, whole, lo if whole else 0, hi if whole else 0], np.int64)
        self.over = read_only(found)
        return self.over


def _number(type_: pa.DataType) -> bool:
    return pa.types.is_integer(type_) or pa.types.is_floating(type_)


def flags(valid: np.ndarray | None) -> tuple[np.ndarray, bool]:
    """Which rows hold a value, as a kernel takes it: the array (empty where every row
    does), and whether to read it."""
    return (np.empty(0, bool), False) if valid is None else (valid, True)


def runs_of(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys of ``keys`` (sorted) and where each one's run starts."""
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else keys[:0]
    return keys[starts], starts.astype(np.int64)


#: the sums over every part answered from prefixes stay below this (each part's largest
#: magnitude times its values, summed over the parts): no int64 sum of them overflows
SUM_BOUND = 4.0e18

#: a part's distinct keys get a table (:func:`key_table`) where they span at most this many
#: times as many keys as they are, plus :data:`TABLE_FLOOR`
TABLE_SPAN, TABLE_FLOOR = 2, 64


def key_table(distinct: np.ndarray, first: int) -> np.ndarray | None:
    """For sorted distinct keys that are dense (spanning at most :data:`TABLE_SPAN` times as
    many keys as they are), each key's place among them, numbered from ``first``, at its
    distance from the smallest (-1 for a key not among them); None where they are not dense
    (or none)."""
    if not len(distinct):
        return None
    span = int(distinct[-1]) - int(distinct[0]) + 1  # Python ints: no wrap
    if span > TABLE_SPAN * len(distinct) + TABLE_FLOOR:
        return None
    table = np.full(span, -1, np.int64)
    table[distinct - distinct[0]] = np.arange(first, first + len(distinct))
    return table


class PartIndex:
    """Each part's keys and times as numbers (``times``: int64 or float64), its distinct keys
    and their runs' starts, and the columns of ``schema`` named in ``read`` that have a fixed
    width (:func:`~windowagg.engine.columns.word_type`) as words with their validity; part
    ``p`` is rows ``bounds[p]`` to ``bounds[p + 1] - 1``."""

    def __init__(
        self,
        times: npt.DTypeLike,
        schema: pa.Schema,
        read: list[str],
        summed: dict[str, bool] | None = None,
        extremes: frozenset[tuple[str, bool]] = frozenset(),
        grouped: frozenset[str] = frozenset(),
        spanned: frozenset[str] = frozenset(),
    ) -> None:
        self.keys, self.times = Growing(np.int64), Growing(times)
        #: whether every time laid is a double exactly, as the engine reads it: a double, or
        #: a whole number of magnitude at most :data:`~windowagg.engine.columns.EXACT`
        self.doubles = True
        self.distinct, self.starts = Growing(np.int64), Growing(np.int64)
        self.bounds, self.doff = [0], [0]  # the parts' first rows, and first distinct keys
        #: where a part's distinct keys are dense, a table of them (:func:`key_table`) from
        #: ``toff[p]`` (empty where not), for keys from ``kmin[p]`` on
        self.table, self.toff = Growing(np.int64), [0]
        self.kmin: list[int] = []
        #: the fixed-width columns read: their type, words and validity (None: no null yet)
        dtypes = {n: word_type(schema.field(n).type) for n in read}
        self.types = {n: schema.field(n).type for n, d in dtypes.items() if d is not None}
        #: and the type their values are read in: a number's own, any other's words
        self.dtypes = {
            n: np.dtype(t.to_pandas_dtype()) if _number(t) else dtypes[n]
            for n, t in self.types.items()
        }
        self.words = {n: Growing(d) for n, d in dtypes.items() if d is not None}
        self.valid: dict[str, Growing | None] = dict.fromkeys(self.types)
        #: the columns whose prefix sums every part keeps (:mod:`.summaries`; each with
        #: whether an entry sums it), laid as the parts are
        self.prefixes = {c: Prefixes(sums) for c, sums in (summed or {}).items()}
        #: the (column, largest) pairs whose tables of their best rows every part keeps
        self.extremes = {(c, largest): Extremes(largest) for c, largest in extremes}
        #: the columns whose rows grouped by key and value every part keeps
        self.grouped = {c: Groups() for c in grouped}
        #: the float64 and int64 columns whose span every part keeps
        self.spans = {c: Spans() for c in spanned}

    @property
    def parts(self) -> int:
        return len(self.bounds) - 1

    @functools.cached_property
    def laid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Where the parts lie, as arrays for the kernels (found once after each push or
        pop): ``doff``, ``bounds``, ``toff``, ``kmin``."""
        return (
            np.array(self.doff, np.int64),
            np.array(self.bounds, np.int64),
            np.array(self.toff, np.int64),
            np.array(self.kmin, np.int64),
        )

    @functools.cached_property
    def found(self) -> dict:
        """What the answers from the parts found of them as they lie (:mod:`.summaries`),
        forgotten after each push or pop."""
        return {}

    @functools.cached_property
    def sound(self) -> bool:
        """Whether every part has its tables of best rows (no NaN) and the sums it keeps are
        of whole numbers whose sum over every part stays below :data:`SUM_BOUND` (found
        once after each push or pop): else the served entries are evaluated over the
        events (:mod:`.summaries`)."""
        clean = all(all(x.clean) for x in self.extremes.values())
        summed = [p for p in self.prefixes.values() if p.sums is not None]
        return clean and all(all(p.whole) and sum(p.bound) < SUM_BOUND for p in summed)

    @property
    def nbytes(self) -> int:
        arrays = [self.keys, self.times, self.distinct, self.starts, self.table]
        arrays += list(self.words.values())
        arrays += [v for v in self.valid.values() if v is not None]
        kept: list[Prefixes | Extremes | Groups] = [
            *self.prefixes.values(),
            *self.extremes.values(),
            *self.grouped.values(),
        ]
        return sum(a.data.nbytes for a in arrays) + sum(k.nbytes for k in kept)

    def reserve(self, rows: int) -> None:
        """Room for ``rows`` rows in all (a state restored at once grows no array)."""
        for laid in (self.keys, self.times, *self.words.values()):
            laid.reserve(rows)

    def part(self, p: int) -> tuple[np.ndarray, np.ndarray]:
        """Part ``p``'s keys and times."""
        a, b = self.bounds[p], self.bounds[p + 1]
        return self.keys.view()[a:b], self.times.view()[a:b]

    def push(
        self,
        keys: np.ndarray,
        times: np.ndarray,
        part: pa.Table,
        merged: dict[str, np.ndarray] | None = None,
    ) -> None:
        """Lay a part after the others: its keys and times (sorted by key, then time) and
        ``part``, its rows in that order (one chunk per column); ``merged``: where two parts
        merged into it, each grouped column's rows of its groups (:meth:`merged_groups`)."""
        at = self.keys.n
        self.keys.extend(keys)
        self.times.extend(times)
        if len(times) and times.dtype != np.float64:  # sorted by key: any may be the widest
            self.doubles = self.doubles and max(-int(times.min()), int(times.max())) <= EXACT
        distinct, starts = runs_of(keys)
        table = key_table(distinct, self.distinct.n)
        self.kmin.append(int(distinct[0]) if table is not None else 0)
        self.table.extend(table if table is not None else distinct[:0])
        self.toff.append(self.table.n)
        self.distinct.extend(distinct)
        self.starts.extend(starts + at)
        self.doff.append(self.distinct.n)
        for name, laid in self.words.items():
            found = words(part.column(name))
            assert found is not None  # a fixed width, in one chunk
            laid.extend(found[0])
            valid = self.valid[name]
            if valid is None and len(found) > 1:  # the first null: the rows before had values
                valid = self.valid[name] = Growing(bool)
                valid.extend(np.ones(at, bool))
            if valid is not None:
                valid.extend(found[1] if len(found) > 1 else np.ones(len(keys), bool))
        self.bounds.append(self.keys.n)
        end = self.keys.n
        for name, prefixes in self.prefixes.items():  # from the values just laid
            values, rows = self.values(name)
            prefixes.push(values[at:end], None if rows is None else rows[at:end])
        for (name, _), extremes in self.extremes.items():
            extremes.push(*self.values(name), at, end)
        for name, grouped in self.grouped.items():
            rows = None if merged is None else merged[name]
            grouped.push(self.keys.view(), *self.values(name), at, end, distinct, rows)
        for name, spans in self.spans.items():
            spans.push(*self.values(name), at, end)
        self._laid_again()

    def _laid_again(self) -> None:
        """Forget what was found of the parts as they lay (after a push or a pop)."""
        self.__dict__.pop("laid", None)
        self.__dict__.pop("sound", None)
        self.__dict__.pop("found", None)

    def merged_groups(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Each grouped column's rows of the last two parts' groups, as rows of the part they
        merge into, whose row ``i`` is row ``rows[i]`` of the two laid one after the other
        (:func:`~windowagg.kernels.key_order.merged_rows`), in its groups' order
        (:meth:`Groups.merged`): taken before the two are popped."""
        start, keys = self.bounds[-3], self.keys.view()
        return {
            name: grouped.merged(keys, self.values(name)[0], rows, start)
            for name, grouped in self.grouped.items()
        }

    def values(self, name: str) -> tuple[np.ndarray, np.ndarray | None]:
        """Fixed-width column ``name``'s laid values, in their own type, and which rows hold
        one (None: every row)."""
        valid = self.valid[name]
        laid = self.words[name].view().view(self.dtypes[name])
        return laid, None if valid is None else valid.view()

    def pop(self, parts: int) -> None:
        """Forget the last ``parts`` parts (to lay them again merged)."""
        del self.bounds[len(self.bounds) - parts :]
        del self.doff[len(self.doff) - parts :]
        del self.toff[len(self.toff) - parts :]
        del self.kmin[len(self.kmin) - parts :]
        for prefixes in self.prefixes.values():
            prefixes.pop(parts, self.bounds[-1] + len(self.bounds) - 1)
        for extremes in self.extremes.values():
            extremes.pop(parts)
        for grouped in self.grouped.values():
            grouped.pop(parts, self.doff[-1])
        for spans in self.spans.values():
            spans.pop(parts)
        self.table.n = self.toff[-1]
        at = self.bounds[-1]
        self.keys.n = self.times.n = at
        self.distinct.n = self.starts.n = self.doff[-1]
        for name, laid in self.words.items():
            laid.n = at
            valid = self.valid[name]
            if valid is not None:
                valid.n = at
        self._laid_again()

    def runs(self, wanted: np.ndarray) -> Runs:
        """Each key of ``wanted`` (sorted, distinct)'s run of rows in each part
        (:func:`~windowagg.kernels.key_order.part_runs`)."""
        w = len(wanted)
        lo, hi = empty((self.parts, w), np.int64), empty((self.parts, w), np.int64)
        at, each = empty((self.parts, w), np.int64), empty(w, np.int64)
        doff, bounds, toff, kmin = self.laid
        laid = (self.distinct.view(), self.starts.view(), doff, bounds, self.table.view())
        n = part_runs(wanted, *laid, toff, kmin, lo, hi, at, each)
        return Runs(lo, hi, n, at, each)

    def merged(self, runs: Runs) -> tuple[Stretches, np.ndarray, np.ndarray]:
        """The rows (numbered across the parts) of ``runs``' keys, key by key in time order,
        ties in arrival order, as stretches of rows that lie one after another; their times
        (as doubles where :attr:`doubles`); and how many of each key
        (:func:`~windowagg.kernels.key_order.merged_runs`)."""
        n = runs.n
        starts, sizes = empty(n, np.int64), empty(n, np.int64)
        # the times as the engine reads them (:func:`~windowagg.engine.columns.times_of`):
        # doubles, converted as they are copied, where every time laid is one exactly
        times = empty(n, np.float64 if self.doubles else self.times.data.dtype)
        counts = empty(runs.lo.shape[1], np.int64)
        head = empty(self.parts, np.int64)
        none = np.empty(0)  # no column copied with the times
        m = merged_runs(
            self.times.view(), none, runs.lo, runs.hi, starts, sizes, times, none, counts, head
        )
        return Stretches(starts[:m], sizes[:m], n), times, counts

    def gathered(self, name: str, rows: Stretches) -> pa.Array | None:
        """Column ``name`` at ``rows`` where it has a fixed width (None where not)."""
        laid = self.words.get(name)
        if laid is None:
            return None
        valid = self.valid[name]
        parts = [laid.view(), *([] if valid is None else [valid.view()])]
        return from_words(self.types[name], stretched_words(parts, *rows))


class Runs(NamedTuple):
    """Key ``w``'s rows in part ``p`` are ``lo[p, w]`` to ``hi[p, w] - 1``; ``n`` rows in
    all; it is the part's distinct key ``at[p, w]`` (numbered across the parts; -1: none)."""

    lo: np.ndarray
    hi: np.ndarray
    n: int
    at: np.ndarray
    each: np.ndarray  # how many rows each key holds

    def keys(self, a: int, b: int) -> Runs:
        """The runs of keys ``a`` to ``b - 1`` alone."""
        lo, hi = np.ascontiguousarray(self.lo[:, a:b]), np.ascontiguousarray(self.hi[:, a:b])
        at, each = np.ascontiguousarray(self.at[:, a:b]), self.each[a:b]
        return Runs(lo, hi, int(each.sum()), at, each)


class Stretches(NamedTuple):
    """Rows as stretches of rows that lie one after another: stretch ``s`` is ``sizes[s]``
    rows from ``starts[s]``; ``n`` rows in all."""

    starts: np.ndarray
    sizes: np.ndarray
    n: int

    def rows(self) -> np.ndarray:
        """Every row, stretch after stretch."""
        first = np.cumsum(self.sizes) - self.sizes  # where each stretch begins in the rows
        return np.arange(self.n, dtype=np.int64) + np.repeat(self.starts - first, self.sizes)
