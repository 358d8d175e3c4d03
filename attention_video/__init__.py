"""The explainer from Python and Jupyter: `explain(sentence)` renders the video (chapter
clips are reused from the cache, as on the command line) and returns an `Explanation`
that shows the video inline with its captions.

    >>> from attention_video import explain
    >>> explain("The black cat drank the milk", chapters=[3, 5])   # doctest: +SKIP

This is the project's one installed top-level name: the folders attncore/, scenes/,
fastmanim/ and pipeline/ install as its subpackages (this folder links to them), so a
user's own `scenes.py` or `pipeline.py` never shadows them, nor they it.
"""

from __future__ import annotations

__all__ = ["Explanation", "explain"]


def __getattr__(name: str):
    """`explain` and `Explanation`, imported on first use (PEP 562): lazy on purpose, so
    that importing a subpackage (attention_video.attncore in a render worker) does not
    import the whole pipeline with it."""
    if name in __all__:
        from attention_video import api

        return getattr(api, name)
    raise AttributeError(f"module 'attention_video' has no attribute {name!r}")
