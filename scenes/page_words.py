"""Every word the companion page (pipeline.outputs.page) shows, from the caption catalogue.

The page is written in the video's caption language, so its buttons, headings and the
explanation of each cell come from the same catalogue as the captions. A `{name}` left in a
message is filled in by the page's script (a word or a number it reads from the trace).
"""

from __future__ import annotations

from attention_video.scenes.catalogue import Translate


def _later(*names: str) -> dict[str, str]:
    """Placeholders the page's script fills: each stays `{name}` in the message."""
    return {n: "{" + n + "}" for n in names}


def page_words(tr: Translate) -> dict[str, str]:
    """The page's words by key (the script looks them up by key)."""
    return {
        "title": tr("Attention, cell by cell: {sentence}", **_later("sentence")),
        "video": tr("The video"),
        "deck": tr("Slides"),  # the link to the --slides deck, when it is made too
        "captions": tr("Captions"),
        "chapter": tr("Chapter"),  # the chapter menu under the video
        "chapters": tr("Chapters"),  # the video's chapters track
        "chapter_keys": tr("[ and ] go to the previous and the next chapter."),
        "descriptions": tr("Descriptions of the picture"),  # the player's descriptions track
        "picture": tr("The picture:"),  # before a caption's description in the list
        "captions_hint": tr("Click a caption to jump there; the one playing is marked."),
        "numbers": tr("The numbers"),
        "numbers_hint": tr("Click a cell or press Enter on it to open how it was made; "
                           "hovering only previews. Arrow keys move between cells; Home and "
                           "End go to a row's ends; Escape goes back to the open cell."),
        "skip": tr("Skip to the numbers"),
        "presenter": tr("Presenter view (P)"),
        "full_screen": tr("Full screen (F)"),
        "preview": tr("A preview: click the cell or press Enter on it to open it."),
        "alone": tr("The video is not beside this page: it plays {file}. Put that file in the "
                    "page's folder, or make it there with:", **_later("file")),
        "other_word": tr("The video follows “{video}”; the numbers here now follow “{word}”. "
                         "To render a video that follows “{word}”:", **_later("video", "word")),
        "more_columns": tr("… {n} more columns", **_later("n")),
        "handout_cells": tr("How each number of “{word}” was made", **_later("word")),
        "follow": tr("Follow the word"),
        "head_n": tr("head {n}", **_later("n")),
        "heads": tr("Every head of layer {layer}", **_later("layer")),
        "heads_hint": tr("Each head's attention pattern; open one to see all its numbers."),
        "open_head": tr("Open head {n}", **_later("n")),
        "model": tr("Every layer and head of the model"),
        "layer_head": tr("layer {layer}, head {n}", **_later("layer", "n")),
        "theme": tr("Theme"),
        "dark": tr("Dark"),
        "light": tr("Light"),
        "show_me": tr("Show me in the video"),
        "predict": tr("Predict first"),
        "predict_h": tr("Predict, then look"),
        "predict_hint": tr("The numbers that answer a question stay hidden until you answer "
                           "it; your answers stay on this page in this browser."),
        "check": tr("Check"),
        "right": tr("✓ Right."),
        "wrong": tr("✗ Not quite: the answer is {answer}.", **_later("answer")),
        "withheld": tr("hidden until you answer the question about it"),
        "answer_first": tr("Answer the question above the grids first: this number gives "
                           "its answer away."),
        "pick_one": tr("Pick an answer first."),
        "not_shown": tr("This video has no chapter that makes this number."),
        "detail": tr("How this number was made"),
        "nothing_open": tr("No cell is open yet."),
        "now_playing": tr("Now in the video: the highlighted numbers."),
        "talked_about": tr("the caption playing talks about this"),
        "followed": tr("the followed word"),
        "word": tr("word"),
        "dimensions": tr("dimension"),
        "dimension": tr("dimension {m}", **_later("m")),
        # What each matrix is, as its grid's heading.
        "X": tr("X, the input rows: one per word"),
        "X_q": tr("X of the query words"),
        "W_Q": tr("W_Q, the query weights"),
        "W_K": tr("W_K, the key weights"),
        "W_V": tr("W_V, the value weights"),
        "Q": tr("Q = X·W_Q, the queries"),
        "K": tr("K = X·W_K, the keys"),
        "V": tr("V = X·W_V, the values"),
        "Q_rot": tr("Q_rot = RoPE(Q), the queries turned: what the scores use"),
        "K_rot": tr("K_rot = RoPE(K), the keys turned: what the scores use"),
        "scores": tr("Q·Kᵀ, every query against every key"),
        "scaled": tr("Q·Kᵀ/√dₖ, the scaled scores"),
        "scores_rot": tr("Q_rot·K_rotᵀ, every turned query against every turned key"),
        "scaled_rot": tr("Q_rot·K_rotᵀ/√dₖ, the scaled scores"),
        "weights": tr("The weights: softmax of each row"),
        "weights_raw": tr("The weights: the raw scores, without softmax"),
        "Z": tr("Z = weights·V, each word's new value"),
        # How a cell was made.
        "x_sum": tr("its embedding plus its position"),
        "x_plain": tr("its embedding, with no position added"),
        # X not made by the sum the page can show (attncore.trace's x_from): said, not summed
        "x_norm": tr("the input to layer 0: {formula}, its embedding plus its position, normalised",
                     **_later("formula")),
        "x_norm_plain": tr("the input to layer 0: {formula}, its embedding normalised, with no "
                           "position added", **_later("formula")),
        "x_hidden": tr("the input to layer {layer}: the hidden state after layer {below}, which "
                       "the layers below made from its embedding", **_later("layer", "below")),
        "x_normed_hidden": tr("the input to layer {layer}: the hidden state after layer {below}, "
                              "normalised; the layers below made it from its embedding",
                              **_later("layer", "below")),
        "x_encoder": tr("the encoder's output: its embedding plus its position, mixed by the "
                        "encoder's self-attention"),
        "learned": tr("A weight the model learned in training: no sum makes it."),
        "random": tr("An untrained random weight: no sum makes it."),
        "bias": tr("plus the bias"),
        "rotation": tr("RoPE turns pair {m} of this row (its entries {a} and {b}) by the angle "
                       "θ = p · base to the power −2m/dₖ, where p = {p} is the word's position and base "
                       "{base}:", **_later("m", "a", "b", "p", "base")),
        "products": tr("Pair by pair: a product is positive where the signs agree and "
                       "negative where they differ."),
        "agree": tr("signs agree"),
        "differ": tr("signs differ"),
        "zero": tr("one is zero"),
        "arrows": tr("The query and the key as arrows in the plane they span: the angle "
                     "between them is {angle}°; the key's shadow on the query's line is "
                     "{shadow}, and {shadow} × |q| {qnorm} {rel} {score}.",
                     **_later("angle", "shadow", "qnorm", "rel", "score")),
        "no_angle": tr("A zero vector has no direction: no angle to draw."),
        "scale": tr("divided by √dₖ, the square root of the width {dk}", **_later("dk")),
        "exp": tr("The exponential of each scaled score minus the row's largest, {max}:",
                  **_later("max")),
        "exp_sum": tr("Their sum, Σ:"),
        "divide": tr("The weight is this word's exponential divided by Σ:"),
        "masked_short": tr("masked"),
        "masked": tr("Masked: this query may not look at this key, so its weight is 0."),
        # A long sum's middle terms, written as one number (the page says "=" or "≈" after it)
        "more_terms": tr("the other {n} terms, added up:", **_later("n")),
        "weighted": tr("Each value row's entry times the weight this query gives its word, "
                       "added up:"),
    }
