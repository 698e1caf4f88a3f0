"""On-disk formats: the index directory and its streamed .npy arrays."""
