"""What perturbation buys, on the command line (docs/cli.md): ``compare --recipe`` reports each
perturbed column's deniability (``attribute``), ``compare --sensitive`` the attribute-inference
attack (``inference``) and the release's closeness, ``risk --sensitive`` the table's closeness;
every number equals the core function's on the same data (run as a real subprocess)."""

import json
import math

import pytest

from sdc_core.data.columns import read_like
from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.names import name
from sdc_core.recipe import load_recipe
from sdc_core.risk.closeness import closeness_report
from sdc_core.risk.deniability import recipe_deniability
from sdc_core.risk.inference import attribute_inference
from tests.cli_run import run

QI = ["age", "gender"]
SENSITIVE = ["treat", "cd40", "symptom"]
#: Banding (a public recoding: no deniability figures), random relabeling of race (seed 000),
#: PRAM of treat, and PRAM with p = 0 of karnof (no protection: ε = ∞).
RECIPE = {"version": 1, "seed": 1, "steps": [
    {"method": "band", "column": "age", "width": 10},
    {"method": "relabel", "column": "race", "alpha": 0.1},
    {"method": "pram", "column": "treat", "p": 0.2},
    {"method": "pram", "column": "karnof", "p": 0.0}]}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """The recipe file and the release ``sdc apply`` writes from ACTG 175."""
    d = tmp_path_factory.mktemp("attribute")
    recipe = d / "recipe.json"
    recipe.write_text(json.dumps(RECIPE))
    out = run("apply", EXAMPLE_PATH, "--recipe", recipe, "-o", d / "p.csv")
    assert out.returncode == 0, out.stderr
    return recipe, d / "p.csv"


def compare(release, *extra):
    recipe, protected = release
    return run("compare", EXAMPLE_PATH, protected, "--qi", ",".join(QI), "--recipe", recipe,
               "--sensitive", ",".join(SENSITIVE), *extra)


@pytest.fixture(scope="module")
def compared(release):
    out = compare(release, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def tables(release):
    """The original and the release as ``compare`` reads them."""
    original = read_table(EXAMPLE_PATH)
    return original, read_like(read_table(release[1]), original)


def test_attribute_equals_recipe_deniability(compared, actg):
    core = recipe_deniability(load_recipe(json.dumps(RECIPE)), actg)
    assert [d["column"] for d in compared["attribute"]] == ["race", "treat", "karnof"]
    assert compared["attribute"] == [d.to_json() for d in core]
    race = compared["attribute"][0]
    # relabeling at α: ε = ln(1 + (1 − α)/(α · min π)) (docs/measures.md), min π = race 1's share
    low = (actg["race"] == 1).mean()
    assert race["epsilon"] == pytest.approx(math.log(1 + 0.9 / (0.1 * low)), rel=1e-12)
    assert race["deniable"] and race["baseline"] == pytest.approx(1 - low, rel=1e-12)
    assert race["baseline"] < race["guess_accuracy"] < 1


def test_no_deniability_is_null(compared):
    karnof = compared["attribute"][2]
    assert karnof["epsilon"] is None and karnof["deniable"] is False
    assert karnof["guess_accuracy"] == 1.0 and "no deniability" in karnof["meaning"]


def test_inference_equals_attribute_inference(compared, tables):
    original, protected = tables
    core = attribute_inference(original, protected, QI, SENSITIVE,
                               load_recipe(json.dumps(RECIPE)))
    assert compared["inference"] == json.loads(core.to_json())
    kinds = {c["column"]: c["kind"] for c in compared["inference"]["attribute_inference"]}
    assert kinds == {"treat": "categorical", "cd40": "numeric", "symptom": "categorical"}
    # the same attacker as the linkage attack: the same exact columns
    assert compared["inference"]["inference_exact_columns"] == compared["linkage_exact_columns"]


def test_the_release_closeness_equals_closeness_report(compared, tables):
    _, protected = tables
    core = closeness_report(protected, QI, SENSITIVE)
    assert compared["closeness"] == [{"column": c, **v.to_json()} for c, v in core.items()]
    assert [c["column"] for c in compared["closeness"]] == SENSITIVE


def test_risk_on_the_release_gives_the_closeness_compare_gives(release, compared):
    out = run("risk", release[1], "--qi", ",".join(QI), "--sensitive", ",".join(SENSITIVE),
              "--no-suda2", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["closeness"] == compared["closeness"]


def test_risk_json_and_text_give_the_closeness_of_each_sensitive_column(actg):
    args = ("risk", EXAMPLE_PATH, "--qi", "age,gender,race", "--sensitive", "treat,cd40,race",
            "--no-suda2")
    out = run(*args, "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["closeness"]
    core = closeness_report(actg, ["age", "gender", "race"], ["treat", "cd40"])
    # race is a quasi-identifier: its l-diversity is reported, its closeness is not
    assert got == [{"column": c, **v.to_json()} for c, v in core.items()]
    assert got[0]["t_closeness"] > 0 and got[1]["delta_disclosure_bounded"] is False
    text = run(*args)
    assert text.returncode == 0, text.stderr
    lines = [x for x in text.stdout.splitlines() if name("t_closeness") in x]
    assert len(lines) == 2
    for line, c in zip(lines, got, strict=True):
        assert line.strip().startswith(f"{c['column']} in the table:")
        for key in ("t_closeness", "beta_likeness", "enhanced_beta_likeness",
                    "delta_disclosure"):
            assert f"{name(key)} {c[key]:.6f}" in line


def test_risk_without_sensitive_columns_has_an_empty_closeness():
    out = run("risk", EXAMPLE_PATH, "--qi", "age,gender", "--no-suda2", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["closeness"] == []


def test_compare_text_has_one_line_per_perturbed_and_per_sensitive_column(release, compared):
    out = compare(release)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for d in compared["attribute"]:
        line = next(x for x in lines if x.startswith(f"  {d['column']} ({d['method']}): ε = "))
        assert f"{name('guess_accuracy')} {100 * d['guess_accuracy']:.1f} % vs " \
               f"{name('baseline')} {100 * d['baseline']:.1f} %" in line
    race = next(x for x in lines if x.startswith("  race (relabel)"))
    assert f"ε = {compared['attribute'][0]['epsilon']:.4g}: " in race and "32.2 times" in race
    assert "ε = ∞: no deniability" in next(x for x in lines if x.startswith("  karnof (pram)"))
    for c in compared["inference"]["attribute_inference"]:
        line = next(x for x in lines if x.startswith(f"  {c['column']} ({c['kind']}): "))
        assert f"{name('inference_accuracy')} {100 * c['inference_accuracy']:.1f} % vs " \
               f"{name('inference_baseline')} {100 * c['inference_baseline']:.1f} %" in line
    closeness = [x for x in lines if " in the release: " in x]
    assert [x.split()[0] for x in closeness] == SENSITIVE


def test_without_a_recipe_the_attribute_key_says_why(release):
    _, protected = release
    out = run("compare", EXAMPLE_PATH, protected, "--qi", ",".join(QI), "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert "attribute" not in r and "--recipe" in r["attribute_note"]
    assert "inference" not in r and "closeness" not in r  # no --sensitive
    text = run("compare", EXAMPLE_PATH, protected, "--qi", ",".join(QI))
    assert f"note: {r['attribute_note']}" in text.stdout.splitlines()


def test_a_recipe_without_perturbation_has_an_empty_attribute(tmp_path):
    recipe = tmp_path / "band.json"
    recipe.write_text(json.dumps({"version": 1, "seed": 1, "steps": [
        {"method": "band", "column": "age", "width": 10}]}))
    protected = tmp_path / "p.csv"
    assert run("apply", EXAMPLE_PATH, "--recipe", recipe, "-o", protected).returncode == 0
    out = run("compare", EXAMPLE_PATH, protected, "--qi", "age,gender", "--recipe", recipe,
              "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["attribute"] == []


@pytest.mark.parametrize("args, message", [
    (("--qi", "age,gender", "--sensitive", "nope"), "nope"),
    (("--qi", "age,gender", "--sensitive", "gender"), "gender"),
    (("--sensitive", "treat"), "--qi"),
    (("--qi", "age,gender", "--sensitive", "treat", "--engine", "duckdb"), "pandas engine"),
    (("--qi", "age,gender", "--sensitive", ","), "comma-separated"),
])
def test_compare_bad_sensitive_columns_exit_2_with_one_line(release, args, message):
    out = run("compare", EXAMPLE_PATH, release[1], *args, "--json")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("sdc_core: error: ")
    assert message in out.stderr


def test_risk_unknown_sensitive_column_exits_2_with_one_line():
    out = run("risk", EXAMPLE_PATH, "--qi", "age,gender", "--sensitive", "treat,nope", "--json")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "nope" in out.stderr


def test_help_mentions_the_new_output():
    help_compare = " ".join(run("compare", "--help").stdout.split())
    for word in ("--sensitive", "attribute", "inference", "closeness", "local-DP ε",
                 "null when infinite", "t-closeness", "δ-disclosure"):
        assert word in help_compare, word
    help_risk = " ".join(run("risk", "--help").stdout.split())
    assert "t-closeness" in help_risk and "JSON: closeness" in help_risk


@pytest.mark.parametrize("command", ["risk", "compare"])
def test_a_sensitive_name_with_a_line_break_still_gives_one_line(release, command):
    files = (EXAMPLE_PATH,) if command == "risk" else (EXAMPLE_PATH, release[1])
    out = run(command, *files, "--qi", "age,gender", "--sensitive", "tr\neat,δ\x1b", "--json")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == "sdc_core: error: unknown sensitive column(s): tr\\neat, δ\\x1b\n"
