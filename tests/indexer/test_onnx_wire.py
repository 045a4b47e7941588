"""The hand-written ONNX messages (onnx_wire.py) are byte for byte what the onnx package writes, and the embedder
loads without the onnx package."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from indexer import onnx_wire as wire
from indexer.model_files import model_dir
from indexer.minilm_graph import OPSET, build_graph
from indexer.weights import bert_shape, mapped_weights


def test_a_node_with_every_kind_of_attribute_is_written_as_onnx_writes_it():
    attributes = {"perm": [0, 2, 1, 3], "axis": -1, "epsilon": 1e-12, "to": TensorProto.FLOAT, "keepdims": 0}
    assert wire.node("Op", ["a", "b"], ["c"], **attributes) == \
        helper.make_node("Op", ["a", "b"], ["c"], **attributes).SerializeToString()
    assert wire.node("Div", ["x", "y"], ["vectors"]) == helper.make_node("Div", ["x", "y"], ["vectors"]).SerializeToString()


def test_tensors_with_raw_and_external_data_are_written_as_onnx_writes_them():
    for array in (np.array([-1, 384]), np.array(0.125, np.float32), np.arange(12, dtype=np.float32).reshape(3, 4)):
        assert wire.tensor("c1", array) == numpy_helper.from_array(array, "c1").SerializeToString()
    expected = TensorProto(name="w", dims=[2, 3], data_type=TensorProto.FLOAT, data_location=TensorProto.EXTERNAL)
    for key, value in (("location", "model.safetensors"), ("offset", "4096"), ("length", "24")):
        entry = expected.external_data.add()
        entry.key, entry.value = key, value
    assert wire.external_tensor("w", (2, 3), "model.safetensors", 4096, 24) == expected.SerializeToString()


def test_a_model_is_written_as_onnx_writes_it():
    nodes, inits = [("Add", ["ids", "c1"], ["out"])], [np.array([1, 2])]
    inputs = [("ids", TensorProto.INT64, ["batch", "tokens"])]
    outputs = [("out", TensorProto.FLOAT, ["batch", 384])]
    graph = helper.make_graph([helper.make_node(*n) for n in nodes], "g", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs],
                              [numpy_helper.from_array(a, f"c{n + 1}") for n, a in enumerate(inits)])
    expected = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    expected.ir_version = 8
    written = wire.model([wire.node(*n) for n in nodes], "g", [wire.tensor(f"c{n + 1}", a) for n, a in enumerate(inits)],
                         [wire.value_info(*i) for i in inputs], [wire.value_info(*o) for o in outputs], 8, OPSET)
    assert written == expected.SerializeToString()


def test_the_minilm_graph_reads_back_as_the_same_bytes():
    folder = model_dir()
    graph, _ = build_graph(mapped_weights(folder / "model.safetensors"), bert_shape(folder), folder)
    model = onnx.load_from_string(graph)
    assert model.SerializeToString() == graph
    assert [o.name for o in model.graph.output] == ["vectors"] and len(model.graph.node) > 100


def test_the_embedder_loads_and_embeds_without_importing_onnx():
    code = ("import sys; from indexer.onnx_minilm import OnnxMiniLM; OnnxMiniLM().embed_query('hello');"
            " print(sorted(m for m in sys.modules if m == 'onnx' or m.startswith(('onnx.', 'google.protobuf'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == "[]"
