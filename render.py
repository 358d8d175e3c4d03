"""Render a lecture-ready video that explains attention on a sentence.

    python render.py "The black cat drank the milk"

A thin entry point over pipeline.commands.cli; `attention-video` is the same command.
"""

from __future__ import annotations

import os
import signal
import sys


def _stopped_early(signum: int, frame: object) -> None:
    """Ctrl-C or SIGTERM while pipeline.commands.cli is imported (before it takes the signals
    over): nothing has been made yet."""
    sys.stderr.write("Interrupted: stopped before anything was made.\n")
    sys.stderr.flush()
    os._exit(128 + signum)


if __name__ == "__main__":
    for _signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_signal, _stopped_early)
    from pipeline.commands.cli import main

    main()
