"""The Protect page's settings and their translation to and from recipe steps (pure Python)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from sdc_core.errors import SdcInputError


@dataclass(frozen=True)
class ProtectSettings:
    """Off by default: width 0, probabilities 0, keep probability 1, k 0."""

    bands: dict[str, float] = field(default_factory=dict)
    pram_columns: list[str] = field(default_factory=list)
    pram_p: float = 0.0
    relabel_columns: list[str] = field(default_factory=list)
    relabel_alpha: float = 0.0
    swap_columns: list[str] = field(default_factory=list)
    swap_percent: float = 0.0
    rr_column: str | None = None
    rr_keep: float = 1.0
    suppress_k: int = 0
    seed: int = 42

    def steps(self, qi: list[str]) -> list[dict[str, Any]]:
        """Recipe steps of the active methods, in the order the page shows them: banding,
        PRAM, relabeling, rank swapping, randomized response, local suppression."""
        out: list[dict[str, Any]] = []
        for col, width in self.bands.items():
            if width > 0:
                out.append({"method": "band", "column": col, "width": _num(width)})
        if self.pram_p > 0:
            out += [{"method": "pram", "column": c, "p": self.pram_p} for c in self.pram_columns]
        if self.relabel_alpha > 0:
            out += [{"method": "relabel", "column": c, "alpha": self.relabel_alpha}
                    for c in self.relabel_columns]
        if self.swap_percent > 0:
            out += [{"method": "rank_swap", "column": c, "window_percent": self.swap_percent}
                    for c in self.swap_columns]
        if self.rr_column and self.rr_keep < 1:
            out.append({"method": "randomized_response", "column": self.rr_column,
                        "keep_probability": self.rr_keep})
        if self.suppress_k > 1 and qi:
            out.append({"method": "local_suppression", "columns": list(qi),
                        "k": int(self.suppress_k)})
        return out


def _num(v: float) -> float | int:
    return int(v) if float(v).is_integer() else float(v)


def from_steps(steps: list[dict[str, Any]], seed: int) -> ProtectSettings:
    """Settings that reproduce ``steps``, or an error naming a step the page cannot show."""
    s = ProtectSettings(seed=seed)
    bands: dict[str, float] = {}
    shared: dict[str, tuple[list[str], float]] = {}
    for i, step in enumerate(steps):
        m = step.get("method")
        keys = set(step) - {"method"}
        where = f"step {i + 1} ({m})"
        if m == "band" and keys == {"column", "width"}:
            bands[step["column"]] = step["width"]
        elif m in ("pram", "relabel", "rank_swap") and keys == {"column", _PARAM[m]}:
            cols, value = shared.get(m, ([], step[_PARAM[m]]))
            if value != step[_PARAM[m]]:
                raise SdcInputError(f"{where}: the Protect page uses one {_PARAM[m]} for all "
                                    f"{m} columns")
            shared[m] = (cols + [step["column"]], value)
        elif m == "randomized_response" and keys == {"column", "keep_probability"}:
            s = replace(s, rr_column=step["column"], rr_keep=step["keep_probability"])
        elif m == "local_suppression" and keys == {"columns", "k"}:
            s = replace(s, suppress_k=int(step["k"]))
        else:
            raise SdcInputError(f"{where}: this step has no control on the Protect page "
                                "(apply it with the command line)")
    pram, relabel, swap = (shared.get(m, ([], 0.0)) for m in ("pram", "relabel", "rank_swap"))
    return replace(s, bands=bands, pram_columns=pram[0], pram_p=pram[1],
                   relabel_columns=relabel[0], relabel_alpha=relabel[1], swap_columns=swap[0],
                   swap_percent=swap[1])


_PARAM = {"pram": "p", "relabel": "alpha", "rank_swap": "window_percent"}


def describe(steps: list[dict[str, Any]], seed: int) -> str:
    """The steps in one line for a caption: "band age width=10; pram race p=0.05; seed 42"."""
    parts = []
    for step in steps:
        target = step.get("column") or "+".join(step.get("columns", []))
        params = " ".join(f"{k}={v}" for k, v in step.items()
                          if k not in ("method", "column", "columns"))
        parts.append(f"{step['method']} {target} {params}".strip())
    return ("; ".join(parts) or "no protection") + f"; seed {seed}"
