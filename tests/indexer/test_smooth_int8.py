"""Long queries take an int8 copy of the model whose vectors stay within cosine 0.99 of float32's; short queries,
and documents unless int8_documents asks (test_int8_documents.py), stay float32; the graph rewrite keeps each Linear's
product."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from indexer import onnx_wire as wire
from indexer import smooth_int8
from indexer.model_files import model_dir
from indexer.onnx_minilm import LONG_QUERY_TOKENS, OnnxMiniLM

LONG_QUERIES = [
    "Our nightly export started failing after the upgrade. The worker logs show psycopg OperationalError: server "
    "closed the connection unexpectedly, always around 02:10 UTC, and the retry succeeds about half the time. "
    "We changed the connection pool size from 10 to 20 last week and moved the database to a bigger instance. "
    "What did we decide about long-running transactions in the export job, and is there a runbook for this?",
    "2026-11-02 14:03:55,201 INFO http.access 10.2.0.17 \"GET /api/v2/appointments?clinic=44 HTTP/1.1\" 200 5123 "
    "184ms\n" * 6 + "why are the appointment lookups slow since Monday?",
    "Priya told Tomasz about the adoption agencies she has been researching and the support group she went to; "
    "Tomasz said he painted a sunrise over the lake and took his kids camping in the mountains last summer. " * 2,
]
SHORT_QUERIES = ["how do I get a database running on my laptop", "billing deploys", "x"]


def test_smoothing_moves_a_channel_range_into_the_weights_and_keeps_the_product():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 8)).astype(np.float32)
    x[:, 3] *= 60  # an outlier channel, as BERT has
    weight = rng.normal(size=(5, 8)).astype(np.float32)  # torch's [out, in]
    s = smooth_int8.smoothing(np.abs(x).max(axis=0), weight, alpha=0.7)
    assert np.allclose((x / s) @ (weight * s).T, x @ weight.T, rtol=1e-4, atol=1e-3)
    assert np.ptp(np.abs(x / s).max(axis=0)) < np.ptp(np.abs(x).max(axis=0)) / 5, "the channels' ranges come closer"


def test_int8_columns_round_trip_within_half_a_step_and_keep_the_largest_value():
    weight = np.random.default_rng(1).normal(size=(8, 5)).astype(np.float32)
    matrix, scales = smooth_int8.quantized_columns(weight)
    assert matrix.dtype == np.int8 and scales.shape == (5,)
    assert np.all(np.abs(matrix.astype(np.float32) * scales - weight) <= scales / 2 + 1e-7)
    assert np.all(np.abs(matrix).max(axis=0) == 127)


def test_seven_bit_columns_where_the_cpu_would_saturate_the_int16_sums():
    weight = np.random.default_rng(2).normal(size=(8, 5)).astype(np.float32)
    matrix, scales = smooth_int8.quantized_columns(weight, 63)
    assert np.all(np.abs(matrix).max(axis=0) == 63)
    assert np.all(np.abs(matrix.astype(np.float32) * scales - weight) <= scales / 2 + 1e-7)


@pytest.mark.parametrize("machine, flags, has_vnni", [
    ("x86_64", "fpu sse2 avx avx2 fma", False),  # AVX2 alone: u8 x s8 pairs summed in a saturating int16
    ("x86_64", "avx2 avx512f avx512bw", False),  # AVX-512 without VNNI saturates too
    ("x86_64", "avx2 avx512f avx512_vnni avx512_bf16", True),
    ("x86_64", "avx2 avx_vnni", True),
    ("AMD64", "avx2 avx_vnni", True),
    ("aarch64", "fp asimd asimddp", False),  # not told: float32, which is right everywhere
])
def test_the_int8_graph_is_taken_only_where_the_cpu_sums_its_products_in_32_bits(machine, flags, has_vnni):
    cpuinfo = f"processor\t: 0\nmodel name\t: some cpu\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n"
    assert smooth_int8.vnni(cpuinfo, machine) is has_vnni
    assert smooth_int8.vnni("", "x86_64") is False  # no flags line: not told


@pytest.mark.parametrize("value, here", [("always", True), ("never", False), ("", None), ("auto", None)])
def test_memdir_int8_overrides_the_cpus_choice_at_the_entry_points(value: str, here: bool | None,
                                                                   monkeypatch: pytest.MonkeyPatch):
    from mcp_server.config import int8_override

    monkeypatch.setenv("MEMDIR_INT8", value)
    assert int8_override() is here


@pytest.mark.model
def test_without_vnni_long_queries_and_int8_documents_stay_float32(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(smooth_int8, "int8_pays", lambda: smooth_int8.vnni())  # the suite takes it everywhere: not here
    monkeypatch.setattr(smooth_int8, "vnni", lambda *args: False)
    model = OnnxMiniLM(int8_long_queries=True, int8_documents=True, int8_cache=tmp_path)
    long_query = "Traceback (most recent call last): " + "File app/jobs.py line 88 in run_import; " * 12
    exact = OnnxMiniLM()
    assert np.array_equal(model.embed_query(long_query), exact.embed_query(long_query))
    assert np.array_equal(model.embed(["a note", long_query]), exact.embed(["a note", long_query]))
    assert not (tmp_path / smooth_int8.CALIBRATION_FILE).exists() and not list(tmp_path.iterdir()), "nothing built"


def test_a_node_of_another_domain_and_a_model_importing_it_are_written_as_onnx_writes_them():
    written = wire.node("DynamicQuantizeMatMul", ["a", "b", "c", "", "d"], ["y"], domain="com.microsoft")
    assert written == helper.make_node("DynamicQuantizeMatMul", ["a", "b", "c", "", "d"], ["y"],
                                       domain="com.microsoft").SerializeToString()
    for array in (np.array([[1, -127]], np.int8), np.array([3, 255], np.uint8)):
        assert wire.tensor("c", array) == onnx.numpy_helper.from_array(array, "c").SerializeToString()
    graph = helper.make_graph([], "g", [], [])
    expected = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    expected.ir_version = 8
    assert wire.model([], "g", [], [], [], 8, 17, {"com.microsoft": 1}) == expected.SerializeToString()


def test_every_linear_of_the_int8_graph_but_the_ffn_outputs_is_an_int8_product_on_smoothed_input():
    folder = model_dir()
    names = [f"encoder.layer.{n}.{part}" for n in range(6) for part in (
        "attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
        "intermediate.dense", "output.dense")]
    maxima = {name: np.ones(1536 if name.endswith("output.dense") and "attention" not in name else 384, np.float32)
              for name in names}
    graph, shared = smooth_int8.int8_graph(folder, maxima)
    model = onnx.load_from_string(graph)
    kinds = [node.op_type for node in model.graph.node]
    ffn_out = [name for name in names if smooth_int8.KEPT_FLOAT32.fullmatch(name)]
    assert len(ffn_out) == 6 and all(name.endswith(".output.dense") and "attention" not in name for name in ffn_out)
    assert kinds.count("Gemm") == 6 and kinds.count("DynamicQuantizeMatMul") == len(names) - 6
    assert {i.domain: i.version for i in model.opset_import} == {"": 17, "com.microsoft": 1}
    for node in model.graph.node:
        if node.op_type == "DynamicQuantizeMatMul":
            producer = next(n for n in model.graph.node if node.input[0] in n.output)
            assert producer.op_type == "Mul", "each product's input is divided by its smoothing first"
    int8 = {i.name for i in model.graph.initializer if i.data_type == onnx.TensorProto.INT8}
    assert len(int8) == len(names) - 6
    assert sorted(name for name in shared if name.endswith(".weight") and "LayerNorm" not in name
                  and not name.startswith("embeddings.")) == sorted(n + ".weight" for n in ffn_out)


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> OnnxMiniLM:
    return OnnxMiniLM(int8_long_queries=True, int8_cache=tmp_path_factory.mktemp("int8"))


@pytest.mark.model
def test_long_query_vectors_from_the_int8_graph_are_within_cosine_099_of_float32(embedder: OnnxMiniLM):
    for text in LONG_QUERIES:
        assert len(embedder.tokenizer.encode(text).ids) >= LONG_QUERY_TOKENS
        int8, exact = embedder.embed_query(text), embedder.embed_query(text, int8=False)
        assert not np.array_equal(int8, exact), "the long query took the int8 graph"
        assert float(int8 @ exact) >= 0.99
        assert abs(float(np.linalg.norm(int8)) - 1) < 1e-5


@pytest.mark.model
def test_short_queries_and_documents_keep_float32_vectors_exactly(embedder: OnnxMiniLM):
    exact = OnnxMiniLM()
    for text in SHORT_QUERIES:
        assert np.array_equal(embedder.embed_query(text), exact.embed_query(text))
    assert np.array_equal(embedder.embed(LONG_QUERIES), exact.embed(LONG_QUERIES)), "stored vectors stay float32"
    assert np.array_equal(exact.embed_query(LONG_QUERIES[0]), exact.embed_query(LONG_QUERIES[0], int8=False)), \
        "an embedder made without int8 long queries keeps float32 for them"


@pytest.mark.model
def test_the_calibration_is_kept_and_a_torn_copy_is_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    OnnxMiniLM(int8_long_queries=True, int8_cache=tmp_path).embed_query(LONG_QUERIES[0])
    [kept] = tmp_path.glob("int8-calibration-*.npz")
    first = OnnxMiniLM(int8_long_queries=True, int8_cache=tmp_path).embed_query(LONG_QUERIES[0])

    def refuse(*_: object) -> None:
        raise AssertionError("calibrated again although the calibration was kept")

    with monkeypatch.context() as patched:
        patched.setattr(smooth_int8, "activation_maxima", refuse)
        again = OnnxMiniLM(int8_long_queries=True, int8_cache=tmp_path).embed_query(LONG_QUERIES[0])
    assert np.array_equal(first, again)
    kept.write_bytes(kept.read_bytes()[:100])
    torn = OnnxMiniLM(int8_long_queries=True, int8_cache=tmp_path).embed_query(LONG_QUERIES[0])
    assert np.array_equal(first, torn) and kept.stat().st_size > 100, "calibrated again and kept whole"


@pytest.mark.model
def test_long_queries_take_the_int8_graph_without_importing_onnx(tmp_path: Path):
    code = ("import sys; from pathlib import Path; from indexer.onnx_minilm import OnnxMiniLM;"
            f" m = OnnxMiniLM(int8_long_queries=True, int8_cache=Path({str(tmp_path)!r}), int8_here=True);"
            f" v = m.embed_query({LONG_QUERIES[0]!r}); assert m._int8[0] is not m._session;"
            " print(sorted(m for m in sys.modules if m == 'onnx' or m.startswith(('onnx.', 'google.protobuf'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.model
@pytest.mark.parametrize("stored", [b"", "foreign"], ids=["empty", "another-layout"])
def test_a_kept_calibration_that_is_empty_or_not_this_models_is_made_again(tmp_path: Path, stored: bytes | str):
    """A calibration file left empty (a power cut after its unsynced write) raised EOFError, and one that loads but
    does not fit this model (another version's layout) raised KeyError in the graph's build: both are outside what
    the cache's read caught, so the host's long queries went float32, and the file stayed for every later host."""
    import io

    first = OnnxMiniLM(int8_long_queries=True, int8_cache=tmp_path)
    vector = first.embed_query(LONG_QUERIES[0])
    [kept] = tmp_path.glob("int8-calibration-*.npz")
    if stored == "foreign":
        out = io.BytesIO()
        np.savez(out, **{"encoder.layer.0.attention.self.query": np.ones(384, np.float32)})
        stored = out.getvalue()
    kept.write_bytes(stored)
    again = OnnxMiniLM(int8_long_queries=True, int8_cache=tmp_path)
    assert np.array_equal(again.embed_query(LONG_QUERIES[0]), vector), "the long query took the int8 graph"
    assert again._int8[0] is not again._session
    with np.load(kept) as replaced:
        assert len(replaced.files) == 36, "calibrated again and the file replaced"
