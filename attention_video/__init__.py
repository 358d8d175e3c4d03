"""The explainer from Python and Jupyter: `explain(sentence)` renders the video (chapter
clips are reused from the cache, as on the command line) and returns an `Explanation`
that shows the video inline with its captions.

    >>> from attention_video import explain
    >>> explain("The black cat drank the milk", chapters=[3, 5])   # doctest: +SKIP
"""

from __future__ import annotations

from attention_video.explain import Explanation, explain

__all__ = ["Explanation", "explain"]
