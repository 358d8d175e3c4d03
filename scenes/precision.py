"""One precision per quantity: how many decimals a number of each kind shows, in every
chapter and caption (and, through pipeline.outputs.page, on the companion page).

Softmax weights and the exp terms they are made of lie between 0 and 1 and show three
decimals, so that exp ÷ Σ (chapter `softmax`) and weight × V (chapter `weighted_sum`) can be
worked on paper from the numbers drawn; everything else shows two (a grid model's X and
weights one, chapter `linear`). Without softmax the "weights" are the raw factors, scores,
and show as scores do.
"""

from __future__ import annotations

SCORES = 2  # Q·Kᵀ, its scaled row and max, Q, K, V, Z, products, lengths
WEIGHTS = 3  # softmax weights, their sums, exp(x − max) and Σ exp


def weight_decimals(normalized: bool) -> int:
    """The decimals of a row of weights: softmax weights, or raw factors (scores) without it."""
    return WEIGHTS if normalized else SCORES


def fmt(value: float, decimals: int = SCORES) -> str:
    """A number as drawn: fixed decimals, a real minus sign, never '-0.00'. (Here, without
    Manim, so the outputs that write numbers as text (the transcript) share it.)"""
    s = f"{value:.{decimals}f}"
    if float(s) == 0.0:
        s = s.lstrip("-")
    return s.replace("-", "−")
