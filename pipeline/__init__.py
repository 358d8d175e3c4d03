"""The render pipeline: plan the chapters, reuse cached clips, render the rest (in
parallel), join them without re-encoding, and write every output atomically.

    cli (click: parse, validate) → app (settings, outputs) → render_video (plan, cache,
    workers, join) → chapter (one scene → one clip); watch re-runs app on every save.
"""
