"""Every number a page cell shows is true, and every model's page is light (issues 39, 41).

The page is opened in headless Chromium and every cell of every matrix is opened in turn
by the page's own script; each formula's arithmetic, as written (its numbers at the
precision shown, the middle terms of a long sum as the one number written for them), is
redone here: where the page says "=", it makes the result as written; where it says "≈",
it does not, and misses it by no more than the rounding of the numbers written can. Each
number is taken at the precision it is written with (its own decimals: 3 for a softmax
weight, an exp and their sum, as the video writes them; 2 for the rest).
"""

from __future__ import annotations

import math
import re

import pytest
from attention_video.pipeline.commands.app import make_settings, make_trace
from attention_video.pipeline.outputs.page import write_page
from attention_video.scenes.precision import SCORES, WEIGHTS, weight_decimals
from attention_video.scenes.text import fmt

from tests.pipeline.outputs.test_page import blank_video, made_up_chapters, open_page

pytestmark = pytest.mark.xdist_group("page")  # one worker: its one browser (tests/conftest.py)

BUDGET = 2_000_000  # bytes, for any model and any sentence of the lint corpus (issue 41)
LONGEST = " ".join(["the"] * 30)  # 32 pieces with [CLS] and [SEP]: the encoders' most

# Each model's representative page: the default sentence; the encoders' also at their
# longest, where a row's sums and its list of exps are long enough to write in part.
MODELS = {
    "tiny": ("The black cat drank the milk", {}),
    "random": ("The black cat drank the milk", {"weights": "random", "heads": 4, "causal": True}),
    "pretrained": ("The black cat drank the milk", {"weights": "pretrained"}),
    "pretrained-long": (LONGEST, {"weights": "pretrained"}),
    "multilingual": ("The black cat drank the milk", {"weights": "multilingual"}),
    "multilingual-long": (LONGEST, {"weights": "multilingual"}),
    "decoder": ("The black cat drank the milk", {"weights": "decoder"}),
}

# Every formula the open cell's explanation shows: the arithmetic as written (without the
# words beside it and the ✓/✗ marks), "=" or "≈", and the number after it.
FORMULAS = """() => {
  const out = [];
  for (const td of document.querySelectorAll("td[data-key][data-i]")) {
    openCell(td, false);
    for (const rel of document.querySelectorAll("#detail-body .rel")) {
      const arithmetic = rel.previousElementSibling.cloneNode(true);
      arithmetic.querySelectorAll(".aside, .sign").forEach(x => x.remove());
      const res = rel.nextElementSibling;
      out.push({key: td.dataset.key, i: td.dataset.i, j: td.dataset.j, rel: rel.textContent.trim(),
                expr: arithmetic.textContent, result: res.textContent});
    }
    const arrows = document.querySelector("#detail-body .geometry p");
    if (arrows) out.push({key: "arrows", i: td.dataset.i, j: td.dataset.j, arrows: arrows.textContent});
  }
  return out;
}"""

NUMBER = re.compile(r"\d+(?:\.\d+)?")
ARROWS = re.compile(r"(−?\d+\.\d+) × \|q\| (\d+\.\d+) ([=≈]) (−?\d+\.\d+)")


def number(text: str) -> float:
    return float(text.strip().strip("()").replace("−", "-"))


def half_unit(text: str) -> float:
    """Half a unit of the last place of a number as written ("0.457": 0.0005)."""
    digits = text.strip().strip("()").partition(".")[2]
    return 0.5 * 10.0 ** -len(digits)


def redo(expr: str) -> tuple[float, float]:
    """The value of the arithmetic as written, and how far rounding the numbers in it to
    the decimals they are written with can move it (products, sums, a quotient by at least
    1, an exp of at most 0: half a unit of the coarsest last place per number, times the
    numbers it multiplies)."""
    python = expr.replace("−", "-").replace("·", "*").replace("×", "*").replace("exp(", "math.exp(")
    assert re.fullmatch(r"[\d.\s()+\-*/mathexp]*", python), expr  # nothing but arithmetic
    value = eval(python, {"math": math})  # noqa: S307 (digits and + − · / exp only)
    written = NUMBER.findall(expr)
    half = max(half_unit(x) for x in written)
    return value, half * (sum(abs(float(x)) for x in written) + len(written) + 1)


def check(formula: dict) -> str | None:
    """What is false about one formula, or None."""
    if formula["key"] == "arrows":
        m = ARROWS.search(formula["arrows"])
        if not m:
            return None  # a zero vector: no angle, no product
        shadow, q, rel, score = number(m[1]), float(m[2]), m[3], number(m[4])
        made, error = shadow * q, 0.005 * (abs(shadow) + q + 1)
        half = half_unit(m[4])
    else:
        made, error = redo(formula["expr"])
        rel, score = formula["rel"], number(formula["result"])
        half = half_unit(formula["result"])  # "=": the result as written, to its last place
    adds_up = abs(made - score) <= half + 1e-9
    if rel == "=" and not adds_up:
        return f"says = but makes {made:.5f}"
    if rel == "≈" and adds_up:
        return f"says ≈ where it adds up ({made:.5f})"
    if abs(made - score) > error + half + 1e-9:
        return f"{made:.4f} is further from {score} than rounding can take it"
    return None


def page_of(tmp_path, name: str, **more):
    sentence, flags = MODELS[name]
    flags = {**flags, **more}
    settings = make_settings(None, sentence, None, dict(flags))
    trace = make_trace(settings, lambda m: None)
    chapters = made_up_chapters()
    video = blank_video(tmp_path / "video.mp4", sum(r.duration for r in chapters))
    return write_page(trace, chapters, video, settings), trace


# The long sentences read by the same sources as the short ones (a real model's page, its
# formulas written the same way) cost three times as much: the slow tier's.
LONG = ("pretrained-long", "multilingual-long")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in LONG
                                  else n for n in MODELS])
@pytest.mark.slow
def test_every_cell_of_every_matrix_adds_up_as_written(browser, tmp_path, name):
    page, trace = page_of(tmp_path, name)
    tab = open_page(browser, page)
    formulas = tab.evaluate(FORMULAS)
    assert tab.errors == []
    tab.context.close()
    false = [(f["key"], f["i"], f["j"], f.get("expr", f.get("arrows"))[:120], f.get("result"), why)
             for f in formulas if (why := check(f))]
    assert false == [], f"{len(false)} of {len(formulas)}: {false[:5]}"
    keys = {f["key"] for f in formulas}  # every sum the page makes was checked
    assert {"Q", "K", "V", "scores", "scaled", "weights", "Z", "arrows"} <= keys, keys
    if trace.rope is not None:
        assert {"Q_rot", "K_rot"} <= keys
    if name.endswith("-long"):  # the long sums wrote their middle terms as one number
        assert any("." in f.get("expr", "") and f["key"] == "Z" for f in formulas)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MODELS))
def test_every_models_page_is_under_two_megabytes(tmp_path, name):
    page, _ = page_of(tmp_path, name)
    assert page.stat().st_size < BUDGET, page.stat().st_size


def test_the_decoders_page_opens_in_under_a_second(browser, tmp_path):
    page, _ = page_of(tmp_path, "decoder")
    tab = open_page(browser, page)
    assert int(tab.get_attribute("body", "data-ready-ms")) < 1000
    tab.context.close()


@pytest.mark.slow
@pytest.mark.parametrize("softmax", [True, False])
def test_a_weight_is_written_as_the_video_writes_it(browser, tmp_path, softmax):
    """One precision per quantity (issue 39): a weight's cell, and the weight, its exps and
    their sum in its explanation, are written as the video writes them (scenes.text.fmt at
    scenes.precision's decimals: a softmax weight and its exps 3; raw factors, scores, 2)."""
    page, trace = page_of(tmp_path, "tiny", softmax=softmax)
    places = weight_decimals(trace.normalized)
    assert places == (WEIGHTS if softmax else SCORES)
    h, i = trace.head, trace.focus
    tab = open_page(browser, page)
    for j in range(trace.n_k):
        cell = f'td[data-key="weights"][data-i="{i}"][data-j="{j}"]'
        assert tab.text_content(cell) == fmt(h.weights[i, j], places)
        tab.click(cell)
        assert tab.text_content('#detail-body .result[data-name="weights"]') == fmt(h.weights[i, j], places)
        if softmax:
            exps = tab.eval_on_selector_all('#detail-body .num[data-name="exp_shifted"]',
                                            "els => els.map(e => e.textContent)")
            assert exps[:trace.n_k] == [fmt(e, WEIGHTS) for e in h.exp_shifted[i]]
            assert tab.text_content('#detail-body .num[data-name="exp_sum"]') == fmt(h.exp_sum[i], WEIGHTS)
    assert tab.errors == []
    tab.context.close()
