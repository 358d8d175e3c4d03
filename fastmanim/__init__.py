"""Manim, made quicker at what these videos do most, with the same pixels:

- fades.py   FadeIn and FadeOut by opacities alone when that is all they change
- glyphs.py  Pango's SVG read a glyph at a time (Manim's Text, 4-7x quicker)
- texts.py   built texts kept on disk across runs
- camera.py  Manim's Cairo camera, each path handed over faster
- encoder.py held frames encoded once, and the time each stage of a render takes

A chapter imports everything it draws and animates from here, in one line:

    from attention_video.fastmanim import *

which is Manim's namespace with its FadeIn and FadeOut replaced by ours, replaced here
once, so no chapter's behaviour depends on the order of its imports.
"""

from types import ModuleType

import manim as _manim
from attention_video.fastmanim import fades as _fades
from manim import *  # noqa: F403

# Manim's two, replaced on purpose: assigned after the star import, so no import sorting
# can put Manim's back over them.
FadeIn, FadeOut = _fades.FadeIn, _fades.FadeOut

__all__ = sorted({name for name, value in vars(_manim).items()
                  if not name.startswith("_") and not isinstance(value, ModuleType)}
                 | {"FadeIn", "FadeOut"})
