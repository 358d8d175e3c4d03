"""Adding a model is one module plus one row: a toy weight source that exists only in this
test (its module is written to a temporary folder, its row registered there) is a --weights
value in --help and the starter config, has its --list-heads table, and draws chapters
1-3, with no file of the project touched.

Each run is a fresh process: the toy registers itself before the command line is imported,
as a plug-in would."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import av
import pytest

TOY = '''
"""A toy model: two heads of seeded weights, no positions, a trace made from scratch."""
import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore.focus import resolve_focus, tokens_of
from attention_video.attncore.sources import Capabilities, Source, register
from attention_video.attncore.trace import AttentionTrace, compute_head

D, HEADS = 4, 2


def build(s, kept):
    tokens = tokens_of(s.sentence, s, "sentence")
    rng = np.random.default_rng(7)
    n = len(tokens)
    E = np.round(rng.normal(size=(n, D)), 1)  # (n, D)
    P = np.zeros((n, D))
    mask = np.ones((n, n), dtype=bool)
    zeros = np.zeros(D)
    heads = tuple(compute_head(0, h, E, E, *(np.round(rng.normal(size=(D, D)), 1)
                                             for _ in range(3)), zeros, zeros, zeros, mask)
                  for h in range(HEADS))
    W_O = np.round(rng.normal(size=(HEADS * D, D)), 1)
    return AttentionTrace(query_tokens=tokens, key_tokens=tokens, E=E, P=P, X=E, E_q=E, P_q=P,
                          X_q=E, heads=heads, W_O=W_O,
                          output=att.multi_head([h.Z for h in heads], W_O),
                          focus=resolve_focus(tokens, s), source="toy", model_name="toy-model",
                          x_label="E", positional=False)


def head_table(s, kept):
    t = build(s, kept)
    return "\\n".join(f"toy head {h}: top word {t.key_tokens[int(np.argmax(x.weights[t.focus]))].text}"
                     for h, x in enumerate(t.heads))


register(Source("toy", "a toy model that exists only in a test", "toy_source:build",
                Capabilities(trained=True), head_table="toy_source:head_table"))
'''

RUN = '''
import sys
sys.path.insert(0, sys.argv.pop(1))
import toy_source  # noqa: F401  (registers the row)
from attention_video.pipeline.commands.cli import main
main(sys.argv[1:])
'''


@pytest.fixture
def toy(tmp_path: Path):
    """Runs the command line with the toy registered; returns (exit status, stdout, stderr)."""
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "toy_source.py").write_text(textwrap.dedent(TOY))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def run(*args: str) -> tuple[int, str, str]:
        p = subprocess.run([sys.executable, "-c", RUN, str(folder), *args], cwd=tmp_path,
                           capture_output=True, text=True, env=env, timeout=600)
        return p.returncode, p.stdout, p.stderr
    return run


@pytest.mark.slow
def test_the_toy_is_a_weights_choice_in_help(toy):
    status, out, err = toy("--help")
    assert status == 0, err
    assert "toy" in out and "a toy model that exists only in a test" in " ".join(out.split())


@pytest.mark.slow
def test_the_toy_is_in_the_starter_config(toy, tmp_path):
    status, _, err = toy("--init-config", str(tmp_path / "start.toml"))
    assert status == 0, err
    text = (tmp_path / "start.toml").read_text()
    assert '"toy"' in text and "a toy model that exists only in a test" in " ".join(text.split())


def test_the_toy_lists_its_heads(toy):
    status, out, err = toy("The black cat drank the milk", "--weights", "toy", "--list-heads")
    assert status == 0, err
    assert "toy head 0: top word" in out and "toy head 1: top word" in out


@pytest.mark.slow
def test_an_unknown_source_is_still_one_line(toy):
    status, _, err = toy("The cat", "--weights", "toys")
    assert status != 0 and "toy" in err and "Traceback" not in err


@pytest.mark.slow
def test_the_toy_draws_chapters_one_to_three(toy, tmp_path):
    status, _, err = toy("The black cat drank the milk", "--weights", "toy", "--chapters", "1-3",
                         "--storyboard", "-j", "1", "-o", str(tmp_path / "board.png"))
    assert status == 0, err
    assert (tmp_path / "board.png").stat().st_size > 10_000
    assert "toy-model" in err  # the weights line names the model


@pytest.mark.slow
def test_the_toy_renders_chapters_one_to_three(toy, tmp_path):
    video = tmp_path / "toy.mp4"
    status, _, err = toy("The black cat drank the milk", "--weights", "toy", "--chapters", "1-3",
                         "-q", "l", "-o", str(video))
    assert status == 0, err
    with av.open(str(video)) as f:
        assert f.duration / av.time_base > 20  # three chapters, each with its captions
