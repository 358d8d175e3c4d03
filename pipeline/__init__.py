"""The render pipeline, by role:

    commands/  cli (click: parse, validate) → app (settings, the outputs asked for);
               watch, batch, starter, train_models, tiny_models
    run/       render (plan, cache, workers, join) → chapter (one scene → one clip);
               workers, executors (Dask), schedule
    cache/     clips (keys and the store), sources, paths
    outputs/   files (atomic writes), video, subtitles, formats, exports, slides, storyboard

Manim itself, made quicker at what these videos do most, is the package fastmanim.
"""
