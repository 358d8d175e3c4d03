"""Running chapters: plan a video's chapters and render them (render), one chapter in one
process (chapter), on local worker processes (workers) or any executor, Dask's included
(executors), longest first (schedule)."""
