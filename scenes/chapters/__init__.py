"""One scene module per chapter of the video, named by its slug (attncore.chapters)."""
