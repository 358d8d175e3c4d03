"""Checks both trained models' tests use: a model file's stored held-out scores against
what its weights score, and the byte-for-byte retraining check, which runs only where the
file says it was trained on this platform and is skipped elsewhere with the reason."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from attention_video.attncore.trained.provenance import bit_identical_here


def assert_retrains_bit_for_bit(data: bytes, from_bytes: Callable[[bytes], Any],
                                to_bytes: Callable[[Any], bytes],
                                train: Callable[[Any], Any]) -> None:
    """Train the file's stored settings again: the same bytes, where the file's platform
    (numpy, BLAS kernel, CPU) is this one; pytest.skip with the reason elsewhere."""
    model = from_bytes(data)
    same_platform, why = bit_identical_here(model.provenance)
    if not same_platform:
        pytest.skip(why)
    assert to_bytes(train(model.train_config)) == data


def assert_stored_scores_reproduced(stored: Mapping[str, float],
                                    scored: Mapping[str, Mapping[str, float]]) -> None:
    """`stored` ("validation_accuracy": ...) is exactly what evaluating the weights gave
    for each split (`scored`: split → Scores.to_dict()), nothing more and nothing less."""
    seen = set()
    for split, scores in scored.items():
        for name, value in scores.items():
            key = f"{split}_{name}"
            seen.add(key)
            if name == "loss":  # a float sum: its last bits follow numpy's SIMD log/exp and
                # the BLAS kernel, which another CPU may round an ulp apart (equal here)
                assert math.isclose(value, stored[key], rel_tol=1e-9), key
            else:  # counts over the split: exactly
                assert value == stored[key], key
    assert seen == set(stored)
