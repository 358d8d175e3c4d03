"""What a run writes, atomically (files): the joined video (video) and its sound (audio),
its subtitles, GIF and WebM (formats), the trace as JSON and CSV (exports), the deck
(slides) and the storyboard's contact sheet and handout (storyboard)."""
