"""The chapter cache: clips kept under keys made of what their scenes read (clips), the
source files a chapter runs (sources), and the cache folder (paths)."""
