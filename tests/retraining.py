"""The byte-for-byte retraining check both trained models use: it runs only where the
model file says it was trained on this platform, and is skipped elsewhere with the reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from attncore.trained.provenance import bit_identical_here


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
