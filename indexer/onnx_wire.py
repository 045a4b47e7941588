"""The few ONNX messages memdir's MiniLM graph is made of, written in protobuf's wire format by hand.

The `onnx` package was imported only to write this graph once per embedding host start, and it stayed: 8 MB of the
host's resident memory and 97 modules (protobuf, ml_dtypes; bench/results/scale.md, issue 32 item 1, mem10k-w3s7). What
the graph needs is small: nodes with int, float and int-list attributes, tensors with raw or external data, inputs and
outputs with named dimensions. Fields go out in field-number order, as protobuf writes them, so the bytes are the ones
`onnx.helper` gave (tests/indexer/test_onnx_wire.py checks them against it).
Field numbers: onnx.proto (proto2: repeated scalars unpacked).
"""

from __future__ import annotations

import struct

import numpy as np

FLOAT, UINT8, INT8, INT64 = 1, 2, 3, 7  # TensorProto.DataType
EXTERNAL = 1  # TensorProto.DataLocation
_ATTRIBUTE_FLOAT, _ATTRIBUTE_INT, _ATTRIBUTE_INTS = 1, 2, 7  # AttributeProto.AttributeType
_DTYPES = {np.dtype(np.float32): FLOAT, np.dtype(np.uint8): UINT8, np.dtype(np.int8): INT8, np.dtype(np.int64): INT64}


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64s go out as ten bytes, two's complement
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(value)) + value


def _text(field: int, value: str) -> bytes:
    return _bytes(field, value.encode())


def _attribute(name: str, value: float | int | list[int]) -> bytes:
    if isinstance(value, float):  # f = 2 (fixed32), type = 20
        return _text(1, name) + _varint(2 << 3 | 5) + struct.pack("<f", value) + _int(20, _ATTRIBUTE_FLOAT)
    if isinstance(value, int):
        return _text(1, name) + _int(3, value) + _int(20, _ATTRIBUTE_INT)
    return _text(1, name) + b"".join(_int(8, v) for v in value) + _int(20, _ATTRIBUTE_INTS)


def node(op_type: str, inputs: list[str], outputs: list[str], domain: str = "",
         **attributes: float | int | list[int]) -> bytes:
    """A NodeProto; attributes sorted by name, as onnx.helper.make_node orders them."""
    return (b"".join(_text(1, i) for i in inputs) + b"".join(_text(2, o) for o in outputs) + _text(4, op_type)
            + b"".join(_bytes(5, _attribute(k, v)) for k, v in sorted(attributes.items()))
            + (_text(7, domain) if domain else b""))


def tensor(name: str, array: np.ndarray) -> bytes:
    """A TensorProto holding a little-endian array's bytes (raw_data), as onnx.numpy_helper.from_array makes it."""
    return (b"".join(_int(1, d) for d in array.shape) + _int(2, _DTYPES[array.dtype]) + _text(8, name)
            + _bytes(9, array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()))


def external_tensor(name: str, dims: tuple[int, ...], location: str, offset: int, length: int) -> bytes:
    """A float TensorProto whose data lies in a file beside the graph, at `offset`."""
    entries = (("location", location), ("offset", str(offset)), ("length", str(length)))
    return (b"".join(_int(1, d) for d in dims) + _int(2, FLOAT) + _text(8, name)
            + b"".join(_bytes(13, _text(1, k) + _text(2, v)) for k, v in entries) + _int(14, EXTERNAL))


def value_info(name: str, elem_type: int, dims: list[str | int]) -> bytes:
    """A ValueInfoProto of a tensor; each dimension named (dim_param) or a number (dim_value)."""
    shape = b"".join(_bytes(1, _text(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    return _text(1, name) + _bytes(2, _bytes(1, _int(1, elem_type) + _bytes(2, shape)))


def model(nodes: list[bytes], name: str, initializers: list[bytes], inputs: list[bytes], outputs: list[bytes],
          ir_version: int, opset: int, domains: dict[str, int] | None = None) -> bytes:
    """A ModelProto of one graph importing the default domain at `opset` (and each of `domains` at its version)."""
    graph = (b"".join(_bytes(1, n) for n in nodes) + _text(2, name) + b"".join(_bytes(5, t) for t in initializers)
             + b"".join(_bytes(11, i) for i in inputs) + b"".join(_bytes(12, o) for o in outputs))
    imports = {"": opset, **(domains or {})}
    return (_int(1, ir_version) + _bytes(7, graph)
            + b"".join(_bytes(8, _text(1, domain) + _int(2, version)) for domain, version in imports.items()))
