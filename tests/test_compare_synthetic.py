"""A synthetic release through ``compare`` and the assessment, issue 53 (docs/measures.md,
"Disclosure risk of a synthetic release"): the measures that compare record by record say why
they give no number and give none; replicated uniques, DiSCO and the distance against the
holdout are given, computed on the records the synthesis step fitted on and those it held
out, which the test finds again from what the step promises (docs/methods.md, "Synthesis
(sequential CART)"): a held-out record is never a donor."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from sdc_core.assess import Setting, Unavailable, assess
from sdc_core.errors import SdcInputError
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.synthetic import synthetic_risk
from tests.cli_run import run
from tests.conftest import ROOT

ADULT = ROOT.parent / "shared" / "data" / "adult.csv"
KEYS = ["sex", "race", "marital-status", "education"]
SENSITIVE = ["salary-class"]
#: the measures that need row i of the release to be the release of the original's row i
RECORD_BY_RECORD = ("IL1_release", "IL1_overall", "eigenvalue_similarity_percent",
                    "linkage_reidentifications", "linkage_risk_percent", "attribute",
                    "inference", "household_linkage")


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(ADULT, sep=";")[[*KEYS, "age", "workclass", *SENSITIVE]].head(1500)


def recipe(holdout: float = 0.5) -> dict:
    return {"version": 1, "seed": 11, "steps": [
        {"method": "top_bottom_code", "column": "age", "top_percentile": 95},
        {"method": "synthesize", "min_leaf": 5, "holdout": holdout}]}


def test_the_assessment_refuses_record_measures_and_gives_the_set_measures(adult):
    r = parse_recipe(recipe())
    a = assess(adult, None, Setting(tuple(KEYS), ("age",), tuple(SENSITIVE)), r)
    assert a.rows is not None and "does not keep the original's rows" in a.rows
    with pytest.raises(SdcInputError, match="record by record"):
        a.linkage  # noqa: B018
    assert isinstance(a.person_deniability, Unavailable) and isinstance(a.inference,
                                                                        Unavailable)
    out = a.to_json(distribution=False)
    assert out["record_by_record"] == a.rows
    assert not [k for k in RECORD_BY_RECORD if k in out]
    # the fitted part and the holdout: the coded table's records, split in two
    coded = apply_recipe(parse_recipe({**recipe(), "steps": recipe()["steps"][:1]}),
                          adult).data
    fitted, holdout = a.held_out
    assert len(fitted) + len(holdout) == len(adult) and len(holdout) == len(adult) // 2
    assert pd.concat([fitted, holdout]).sort_index().equals(coded)
    want = synthetic_risk(fitted, a.released, KEYS, SENSITIVE, holdout, ["age"])
    assert {k: out[k] for k in want.to_json()} == want.to_json()
    assert 0 <= out["dcr_train_share"] <= 1 and out["dcr_expected_share"] == 0.5


def test_the_synthesis_keeps_the_holdout_out_of_the_fit(adult):
    """What the step promises, so the split the assessment recomputes is the step's: a
    column that is the record's own label, drawn as the last column, can only take the
    labels of fitted records."""
    df = adult.assign(label=[f"r{i}" for i in range(len(adult))])
    r = parse_recipe({"version": 1, "seed": 11, "steps": [
        {"method": "synthesize", "min_leaf": 1, "holdout": 0.5}]})
    a = assess(df, None, Setting(tuple(KEYS)), r)
    fitted, holdout = a.held_out
    drawn = set(a.released["label"])
    assert drawn <= set(fitted["label"]) and not drawn & set(holdout["label"])


def test_compare_of_a_synthetic_file_says_what_does_not_apply(adult, tmp_path):
    (tmp_path / "recipe.json").write_text(json.dumps(recipe()))
    adult.to_csv(tmp_path / "o.csv", index=False)
    applied = run("apply", tmp_path / "o.csv", "--recipe", tmp_path / "recipe.json", "-o",
                  tmp_path / "s.csv")
    assert applied.returncode == 0, applied.stderr
    args = ["compare", tmp_path / "o.csv", tmp_path / "s.csv", "--qi", ",".join(KEYS),
            "--sensitive", "salary-class", "--recipe", tmp_path / "recipe.json"]
    out = run(*args, "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    a = assess(adult, None, Setting(tuple(KEYS), ("age",), ("salary-class",)),
               parse_recipe(recipe()))
    assert got["record_by_record"] == a.rows
    for key in ("replicated_uniques", "replicated_uniques_percent", "dcr_train_share",
                "exact_copies"):
        assert got[key] == pytest.approx(a.to_json(distribution=False)[key], abs=1e-9), key
    assert [d["column"] for d in got["disco"]] == ["salary-class"]
    assert not [k for k in RECORD_BY_RECORD if k in got]
    text = run(*args)
    assert text.returncode == 0, text.stderr
    assert "not computed" in text.stdout and "replicated uniques:" in text.stdout
    assert "DiSCO" in text.stdout and "release records nearer a training record" in text.stdout
    records = run(*args, "--records", tmp_path / "records.csv")
    assert records.returncode == 2 and records.stderr.count("\n") == 1
    assert "record by record" in records.stderr


def test_a_release_of_another_length_without_recipe_is_read_as_a_set(adult, tmp_path):
    adult.to_csv(tmp_path / "o.csv", index=False)
    adult.sample(900, random_state=3).to_csv(tmp_path / "r.csv", index=False)
    out = run("compare", tmp_path / "o.csv", tmp_path / "r.csv", "--qi", ",".join(KEYS),
              "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert "900 records, the original 1500" in got["record_by_record"]
    assert got["records"] == 900 and "IL1_release" not in got


def test_a_masked_release_gets_the_set_measures_beside_the_record_ones(adult):
    r = parse_recipe({"version": 1, "seed": 2, "steps": [
        {"method": "pram", "column": "race", "p": 0.2}]})
    a = assess(adult, None, Setting(tuple(KEYS), (), ("salary-class",)), r)
    out = a.to_json(distribution=False)
    assert "IL1_release" in out and "linkage_reidentifications" in out
    want = synthetic_risk(adult, a.released, KEYS, ["salary-class"])
    assert out["replicated_uniques"] == want.replicated_uniques
    assert "dcr_train_share" not in out  # no synthesis step held records out


def test_the_distributions_of_a_release_of_another_length_are_compared(adult):
    """TVD and the numeric shifts compare distributions, so they apply to a release with its
    own number of records: ½ Σ_v |p′_v − p_v| counted here."""
    import warnings

    r = parse_recipe({"version": 1, "seed": 5, "steps": [
        {"method": "synthesize", "min_leaf": 1, "records": 700}]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the trees' fit says nothing on stderr
        a = assess(adult, None, Setting(tuple(KEYS), ("age",)), r)
        dist = a.distribution.set_index("column")
    assert len(a.released) == 700
    for c in KEYS:
        p = adult[c].value_counts(normalize=True)
        q = a.released[c].value_counts(normalize=True)
        want = 0.5 * sum(abs(q.get(v, 0.0) - p.get(v, 0.0)) for v in set(p.index) | set(q.index))
        assert dist.loc[c, "tvd"] == pytest.approx(want, abs=1e-12), c
    assert dist.loc["age", "mean_shift"] == pytest.approx(
        a.released["age"].mean() - adult["age"].mean(), abs=1e-9)


def loop_replicated_uniques(original: pd.DataFrame, released: pd.DataFrame,
                            keys: list[str]) -> int:
    """Original records unique on the keys whose combination is unique in the release too,
    record by record."""
    def counts(df: pd.DataFrame) -> dict[tuple, int]:
        out: dict[tuple, int] = {}
        for row in df[keys].astype(str).itertuples(index=False):
            out[tuple(row)] = out.get(tuple(row), 0) + 1
        return out

    o, s = counts(original), counts(released)
    return sum(1 for row in original[keys].astype(str).itertuples(index=False)
               if o[tuple(row)] == 1 and s.get(tuple(row), 0) == 1)


@pytest.mark.parametrize("synthesised", [False, True])
def test_a_banded_release_is_read_through_its_public_recodings(adult, synthesised):
    """The attacker bands the true ages as the recipe does before looking for a unique
    person: a release that only bands age replicates every unique of the banded keys (the
    release's own uniques), and a synthesis after banding is compared with the banded
    original, not with ages that no band label equals (which replicated nothing)."""
    keys = [*KEYS, "age"]
    steps = [{"method": "band", "column": "age", "width": 10}]
    steps += [{"method": "synthesize", "min_leaf": 3}] if synthesised else []
    r = parse_recipe({"version": 1, "seed": 2, "steps": steps})
    a = assess(adult, None, Setting(tuple(keys), (), ("salary-class",)), r)
    banded = apply_recipe(parse_recipe({"version": 1, "seed": 2, "steps": steps[:1]}),
                          adult).data
    want = loop_replicated_uniques(banded, a.released, keys)
    assert a.synthetic.replicated_uniques == want > 0
    if not synthesised:
        fk = a.released.groupby(keys, dropna=False)[keys[0]].transform("size")
        assert want == int((fk == 1).sum())
    assert loop_replicated_uniques(adult, a.released, keys) == 0  # the ages read as they are
