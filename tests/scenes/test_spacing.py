"""Every gap in scenes/ is a named step of scenes.layout or a named exception: no literal
number is a buff (keyword, positional, or a parameter's default) outside layout.py."""

from __future__ import annotations

import ast

import pytest

from tests.support.paths import ROOT

SCENES = ROOT / "scenes"
BUFF_AT = {"next_to": 2, "to_edge": 1, "to_corner": 1, "arrange": 1}  # buff's position


def is_number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return (isinstance(node, ast.Constant) and isinstance(node.value, int | float)
            and not isinstance(node.value, bool))


def literal_buffs(source: str) -> list[str]:
    """'line: code' for each literal number given as a buff in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            given = [k.value for k in node.keywords if k.arg == "buff"]
            method = node.func.attr if isinstance(node.func, ast.Attribute) else None
            if method in BUFF_AT and len(node.args) > BUFF_AT[method]:
                given.append(node.args[BUFF_AT[method]])
            found += [f"{v.lineno}: {ast.unparse(node)}" for v in given if is_number(v)]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args.posonlyargs + node.args.args
            defaults = [None] * (len(args) - len(node.args.defaults)) + node.args.defaults
            pairs = list(zip(args, defaults)) + list(zip(node.args.kwonlyargs,
                                                         node.args.kw_defaults))
            found += [f"{d.lineno}: def {node.name}(… {a.arg}={ast.unparse(d)} …)"
                      for a, d in pairs if a.arg == "buff" and d is not None and is_number(d)]
    return found


@pytest.mark.parametrize("path", sorted(p.relative_to(SCENES).as_posix()
                                        for p in SCENES.rglob("*.py") if p.name != "layout.py"))
@pytest.mark.slow
def test_no_buff_is_a_literal_number(path):
    assert literal_buffs((SCENES / path).read_text(encoding="utf-8")) == []


def test_the_check_finds_each_kind_of_literal_buff():
    source = ("a.next_to(b, UP, buff=0.2)\n"
              "a.next_to(b, UP, 0.15)\n"
              "a.to_edge(DOWN, -0.28)\n"
              "a.arrange(DOWN, 0.3)\n"
              "Arrow(p, q, buff=0)\n"
              "def box(mob, buff: float = 0.03): ...\n"
              "def box2(mob, *, buff=1): ...\n"
              "a.next_to(b, UP, buff=BUFF_SMALL)\n"
              "a.arrange(DOWN, buff=gap * 0.5)\n")
    assert sorted(int(f.split(":")[0]) for f in literal_buffs(source)) == [1, 2, 3, 4, 5, 6, 7]
