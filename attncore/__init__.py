"""Numeric core of the attention explainer: pure numpy, no manim, no click, no file output.

    settings → tokenize → weights → AttentionTrace (frozen, every intermediate)
"""

from __future__ import annotations

from attention_video.attncore.build import build_trace
from attention_video.attncore.settings import Settings, SettingsError
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trace import AttentionTrace, HeadTrace

__all__ = ["AttentionTrace", "HeadTrace", "Settings", "SettingsError", "Token", "build_trace"]
