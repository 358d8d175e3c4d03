"""Numeric core of the attention explainer: pure numpy, no manim, no click, no file output.

    settings → tokenize → weights → AttentionTrace (frozen, every intermediate)
"""

from __future__ import annotations

from attncore.build import build_trace
from attncore.settings import Settings, SettingsError
from attncore.tokenize import Token
from attncore.trace import AttentionTrace, HeadTrace

__all__ = ["AttentionTrace", "HeadTrace", "Settings", "SettingsError", "Token", "build_trace"]
