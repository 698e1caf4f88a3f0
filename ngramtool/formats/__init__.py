"""On-disk formats: the index directory (rows stored, or tokens only with rows computed on read)
and its streamed ``.npy`` arrays, merged datasets of index shards, the pipe stream, token files
(nanoGPT, llm.c, Megatron, datatrove, ``.npy``, raw), the data checksums (xxh3-128 or sha256) and
which recorded settings must agree. Outputs are written through :mod:`ngramtool.util.atomic`."""
