"""The render pipeline: plan the chapters, reuse cached clips, render the rest (in
parallel), join them without re-encoding, and write every output atomically."""
