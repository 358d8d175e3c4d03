"""The render pipeline, in layers (each imports only from those below it; lint-imports
checks it, pyproject.toml [tool.importlinter]):

    commands/  cli (click: parse, validate) → watch → app (settings; one function per
               mode); modes (which mode wins, what is refused), batch, starter,
               train_models, tiny_models; registry (the outputs' table: one row each)
    run/       render (plan, cache, workers, join) → chapter (one scene → one clip);
               stills (the storyboard's), workers, executors (Dask), schedule
    outputs/   files (atomic writes), video, audio, subtitles, formats, exports, slides,
               storyboard (contact sheet and PDF)
    cache/     keys, store, limits (size and pruning), disk (a full disk), sources, paths
    records    what run, cache and outputs hand each other

Manim itself, made quicker at what these videos do most, is the package fastmanim.
"""
