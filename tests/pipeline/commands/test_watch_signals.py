"""--watch, waiting for the next save, stopped by a signal: the shell's status is 128 + the
signal's number (130 for Ctrl-C, 143 for SIGTERM). watchfiles turns any signal into
KeyboardInterrupt while it waits; SIGTERM still ends with 143."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support.paths import ROOT


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_watch_stopped_by_a_signal_exits_with_its_status(tmp_path, sig):
    config = tmp_path / "talk.toml"
    config.write_text('sentence = "The cat"\ntheme = "neon"\n')  # waits for a fixed save
    err = tmp_path / "stderr.txt"
    env = dict(os.environ, ATTENTION_CACHE_DIR=str(tmp_path / "cache"))
    with open(err, "w") as f:
        p = subprocess.Popen([sys.executable, str(ROOT / "render.py"), "--config", str(config),
                              "--watch"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                             stderr=f)
    deadline = time.monotonic() + 120
    while "fix it and save again" not in err.read_text() and time.monotonic() < deadline:
        assert p.poll() is None, err.read_text()
        time.sleep(0.2)
    assert "theme: 'neon' is not allowed" in err.read_text()
    p.send_signal(sig)
    assert p.wait(timeout=30) == 128 + sig
    assert err.read_text().rstrip().endswith("earlier output left as it was.")
