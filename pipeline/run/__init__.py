"""Running chapters: plan a video's chapters and render them (render), one chapter in one
process (chapter), the storyboard's stills without animating (stills), on local worker
processes (workers) or any executor, Dask's included (executors), longest first
(schedule)."""
