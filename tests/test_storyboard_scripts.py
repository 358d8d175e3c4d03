"""The storyboard prints captions in any script: a combining mark stays with its letter."""

from __future__ import annotations

import pytest
from attention_video.pipeline.outputs import storyboard as sb


@pytest.mark.parametrize("word", ["था", "बाज़ार", "كَتَبَ", "मैं"])
def test_a_word_with_combining_marks_is_one_run_of_one_font(word):
    runs = sb._runs(f'We follow "{word}" here', 28)
    with_word = [(font, text) for font, text in runs if word[0] in text]
    assert len(with_word) == 1 and word in with_word[0][1]
