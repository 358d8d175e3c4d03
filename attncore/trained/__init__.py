"""What the two models trained here share: the tiny model (attncore.tiny) and the
translation model (attncore.translate) are siblings that import this package, never each
other.

    layers.py      the steps of a forward pass, each with its hand-written backward step
    params.py      GridParams: a model's learned arrays, rounded to the 0.1 grid on demand
    training.py    Adam, warm-up and cosine decay, the rounded phase, restarts and finalists
    history.py     the kept restart's snapshots (Snapshot) and curves (chapter `learning`
                   draws them)
    run.py         one head on one sentence (HeadRun), read-only arrays
    corpus.py      the tokenizer over a vocabulary, the error naming unknown words, seeded
                   distinct draws
    store.py       a model file (ModelFile): safetensors bytes, one JSON metadata key,
                   integer tenths; a model's store names only its readout and vocabularies
    provenance.py  how a model was made: the command that trains it again and the platform
                   (numpy, BLAS kernel, CPU) that bit-identical retraining needs

Pure numpy like the rest of attncore: nothing here writes a file unless a caller asks
(store.write_model_file).
"""
