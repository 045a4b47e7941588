"""A truncated index file is moved aside when the vault opens (indexer/generations.quarantine); doctor names it."""

from __future__ import annotations

from pathlib import Path

from indexer.generations import Layout
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService
from mcp_server.service import operations as ops


def test_doctor_names_the_index_files_that_did_not_load_and_were_moved_aside(hashing_example: Path):
    app = App(hashing_example)
    try:
        assert not [w for w in MemoryService(app).doctor(ops.Doctor()).warnings if "quarantine" in w["path"]]
    finally:
        app.close()
    vectors = Layout(hashing_example).current() / "vectors.faiss"
    vectors.write_bytes(vectors.read_bytes()[: vectors.stat().st_size // 3])
    app = App(hashing_example)
    try:
        service = MemoryService(app)
        report = service.doctor(ops.Doctor())
        assert service.search(ops.Search(query="celery"))  # the vault answers: it was rebuilt from the files
    finally:
        app.close()
    moved = [w for w in report.warnings if w["path"].startswith(".memdir/quarantine/")]
    assert len(moved) == 1 and "did not load" in moved[0]["reason"]
    assert (hashing_example / moved[0]["path"] / "vectors.faiss").is_file()


def test_the_cli_doctor_without_a_server_names_them_too(hashing_example: Path):
    from click.testing import CliRunner

    from mcp_server.cli.commands import cli

    app = App(hashing_example)
    app.close()
    vectors = Layout(hashing_example).current() / "vectors.faiss"
    vectors.write_bytes(vectors.read_bytes()[: vectors.stat().st_size // 3])
    App(hashing_example).close()  # the owner's open moves the damaged generation aside and rebuilds
    result = CliRunner().invoke(cli, ["doctor", "--vault", str(hashing_example)])
    assert "warning: .memdir/quarantine/gen-" in result.output and "did not load" in result.output
