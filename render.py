"""Render a lecture-ready video that explains attention on a sentence.

    python render.py "The black cat drank the milk"

A thin entry point over pipeline.cli; `attention-video` is the same command.
"""

from pipeline.cli import main

if __name__ == "__main__":
    main()
