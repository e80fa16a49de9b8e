"""One truth for the linkage attack's attackers (docs/measures.md, "The attackers"): on a
release with blanks (tests/attackers.py), the Protect page shows the headline attacker and its
figures as the core gives them, and the others on demand; the command line's and the report's
are tests/test_attackers.py's."""

import json

import pandas as pd
import pytest

from sdc_core.names import count_and_percent
from sdc_core.risk.linkage import ATTACKER_NAMES
from tests.apptest import app_on, metrics, opened
from tests.attackers import SEED, STEPS


def test_protect_page_shows_the_headline(attacked):
    _, result = attacked
    at = app_on("views/protect.py")
    recipe = json.dumps({"seed": SEED, "steps": STEPS})
    at.file_uploader(key="recipe_upload").set_value(("r.json", recipe.encode(), "x")).run()
    assert not at.exception
    summary = result.summary()
    assert metrics(at)["Linkage attack re-identifications"] == count_and_percent(
        "linkage_reidentifications", summary)
    opened(at, "p_how", "p_attackers")
    how = " ".join(m.value for m in at.markdown)
    assert "reports the one that re-identifies most, here **fewest blanks first**" in how
    every = next(d.value for d in at.dataframe if "headline" in d.value.columns)
    expected = pd.DataFrame({"attacker": [ATTACKER_NAMES[a] for a in summary["linkage_attackers"]],
                             "headline": ["", "yes", ""]})
    pd.testing.assert_frame_equal(every[["attacker", "headline"]], expected)
    assert every["linkage attack re-identifications after"].tolist() == pytest.approx(
        [f["linkage_reidentifications"] for f in summary["linkage_attackers"].values()],
        abs=1e-9)
