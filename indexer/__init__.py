"""memdir's derived state: embeddings, FAISS, Whoosh, the wikilink graph, the watcher and search."""

import os

# faiss-cpu bundles an OpenMP runtime, and so does torch where it is loaded too (the tests'
# reference model, the benches' baseline); with the default (spinning) wait policy their idle
# threads busy-wait against each other, and on 2 cores a one-sentence embedding took 490 ms
# instead of 15 ms (measured). Passive waiting must be chosen before either library loads,
# hence here, at the top of the package that imports them.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
