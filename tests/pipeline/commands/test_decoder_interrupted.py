"""SIGTERM while the decoder's weights are being kept for the first time: the command stops
with its one line and leaves nothing in the cache's models folder (it left
models/smollm2-…-v1.<random>, up to 307 MB, while saying 'temporary files removed')."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from attention_video.attncore.decoder import gguf_file
from attention_video.attncore.settings import SettingsError

try:
    gguf_file.find_gguf()
except SettingsError:
    pytest.skip(f"SmolLM2 is not installed ({gguf_file.INSTALL_LINE})", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[3]
WRITING = re.compile(r"smollm2-[0-9a-f]+-v\d+\..+")  # a temporary folder being written
CLI = "from attention_video.pipeline.commands.cli import main; main()"


@pytest.mark.slow
def test_sigterm_while_the_weights_are_written_leaves_nothing(tmp_path):
    cache = tmp_path / "cache"
    env = {**os.environ, "ATTENTION_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, "-c", CLI, "The black cat", "--weights",
                              "decoder", "--list-heads"], env=env, cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    models = cache / "models"
    deadline = time.monotonic() + 120
    while child.poll() is None and time.monotonic() < deadline:
        if models.is_dir() and any(WRITING.fullmatch(p.name) for p in models.iterdir()):
            break
        time.sleep(0.01)
    assert child.poll() is None, "the command ended before it wrote the weights"
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 128 + signal.SIGTERM, err
    assert "Interrupted" in err and "Traceback" not in err
    assert list(models.iterdir()) == []
