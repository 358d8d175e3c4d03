"""pipeline.commands.modes: one function per mode, and one table of the combinations an
option refuses, which the command line and the notebook API both read."""

from __future__ import annotations

import pytest
from attention_video import explain
from attention_video.pipeline.commands import app
from attention_video.pipeline.commands.modes import MODES, refusals, refused

from tests.pipeline.commands.test_cli import run_main


def test_every_mode_has_one_function_and_the_first_given_wins(monkeypatch):
    assert set(app.MAKERS) == {m.name for m in MODES}
    ran = []
    for name in app.MAKERS:
        monkeypatch.setitem(app.MAKERS, name, lambda s, r, say, show, name=name: ran.append(name))
    app.make_outputs(None, app.Request())
    app.make_outputs(None, app.Request(dry_run=True))
    app.make_outputs(None, app.Request(storyboard=True, dry_run=True))
    app.make_outputs(None, app.Request(list_vocab=True, list_heads=True))
    assert ran == ["video", "dry_run", "storyboard", "list_vocab"]


def test_the_table_refuses_what_it_declares_and_nothing_else():
    for r in refusals():
        for other in r.others:
            assert refused({r.option: True, other: True}) is not None
        assert refused({r.option: True}) is None
    assert refused({"slides": True, "formats": "gif", "dry_run": True}) is None


@pytest.mark.parametrize("args, given", [
    (["a b", "--storyboard", "--slides"], dict(storyboard=True, slides=True)),
    (["a b", "--storyboard", "--format", "gif", "--slides"],
     dict(storyboard=True, formats="gif", slides=True)),
    (["--watch", "--config", "x.toml", "--list-vocab"], dict(watch=True, list_vocab=True)),
    (["a b", "--dry-run", "--scheduler", "tcp://h:1"], dict(dry_run=True, scheduler="tcp://h:1")),
    (["--batch", "m.toml", "-o", "x.mp4", "--slides"], dict(batch="m.toml", output="x.mp4",
                                                            slides=True)),
])
def test_the_command_says_the_tables_line(capsys, args, given):
    code, _, err = run_main(args, capsys)
    assert code == 2
    assert err.strip() == f"Error: {refused(given)} (see --help)"


def test_the_command_and_the_api_refuse_alike(capsys, tmp_path):
    code, _, err = run_main(["a b", "--storyboard", "--slides"], capsys)
    with pytest.raises(ValueError) as info:
        explain("a b", storyboard=True, slides=True, folder=tmp_path)
    line = refused(dict(storyboard=True, slides=True))
    assert code == 2 and line in err and str(info.value) == f"explain(): {line}"
