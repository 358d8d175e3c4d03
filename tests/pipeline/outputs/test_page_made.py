"""'Show me in the video' lands in the caption where the video makes each quantity (issue 39).

Every chapter of the default sentence's video is built under dry run (no frames) with its
real captions; for each quantity of the page, the caption `made_at` seeks to must be the
one, named here by its chapter and its words, where the scene draws it being made: Z where
the weighted rows are added (not the summary), the weights where softmax divides by Σ (not
where they are used), Q·Kᵀ where the factor matrix is made (not a caption about one cell).
"""

from __future__ import annotations

import pytest
from attention_video.attncore import Settings
from attention_video.pipeline.outputs.page import made_at, page_cues

from tests.support.builds import dry_run, plan_of, trace_of

SENTENCE = "The black cat drank the milk"

# Each quantity → the chapter and a phrase of the English caption that makes it.
MAKING = {"X": ("input", "X ="), "W_Q": ("linear", "Q = X · W_Q"), "Q": ("linear", "Q = X · W_Q"),
          "W_K": ("linear", "K = X · W_K"), "K": ("linear", "K = X · W_K"),
          "W_V": ("linear", "V = X · W_V"), "V": ("linear", "V = X · W_V"),
          "scores": ("factor", "Each cell is one query row · one key column"),
          "scaled": ("softmax", "Divide by √dₖ"), "weights": ("softmax", "divide each by their sum"),
          "Z": ("weighted_sum", "column by column gives Z")}
TURNED = {"Q_rot": ("linear", "Q_rot = RoPE(Q)"), "K_rot": ("linear", "K_rot = RoPE(K)")}


# The tiny model as the default video picks it ("auto"): its chapters are built once per
# session for tests/scenes/test_scenes.py too, on the worker of their xdist group.
@pytest.mark.parametrize("weights", [
    pytest.param("auto", id="tiny", marks=pytest.mark.xdist_group("scene-builds")),
    pytest.param("decoder", marks=pytest.mark.slow)])
def test_each_quantity_seeks_to_the_caption_that_makes_it(weights):
    s = Settings(sentence=SENTENCE, weights=weights)
    assert trace_of(s).source == ("tiny" if weights == "auto" else weights)
    rotary = trace_of(s).rope is not None
    chapters = [dry_run(s, slug) for slug in plan_of(s)]
    cues = page_cues(chapters)
    at = made_at(chapters, cues, rotary)
    want = MAKING | (TURNED if rotary else {})
    for key, (chapter, words) in want.items():
        assert key in at, key
        cue = cues[at[key]]
        assert cue.chapter == chapter and words in cue.text, (key, cue)
