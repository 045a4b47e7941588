"""memdir's derived state: embeddings, FAISS, Whoosh, the wikilink graph, the watcher and search."""
