"""The chapter cache, by job: the key a clip is kept under (keys), the clips and their
records (store), the folder's size limit and pruning (limits), a full disk (disk), the
source files a chapter runs (sources), and the cache folder (paths)."""
