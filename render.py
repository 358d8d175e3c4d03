"""Render a lecture-ready video that explains attention on a sentence.

    python render.py "The black cat drank the milk"

A thin entry point over attention_video.pipeline.commands.cli; `attention-video` is the same command.
"""

from __future__ import annotations

import os
import signal
import sys


def _stopped_early(signum: int, frame: object) -> None:
    """Ctrl-C or SIGTERM while the command line is imported (before it takes the signals
    over): nothing has been made yet."""
    sys.stderr.write("Interrupted: stopped before anything was made.\n")
    sys.stderr.flush()
    os._exit(128 + signum)


if __name__ == "__main__":
    for _signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_signal, _stopped_early)
    try:
        from attention_video.pipeline.commands.cli import main
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("attention_video"):
            raise
        sys.exit("render.py: the project is not installed in this Python "
                 f"({sys.executable}); run `bash scripts/setup.sh`, then .venv/bin/python render.py")
    main()
