#!/usr/bin/env python3
"""Reference vectors for dgr's IQ4_NL and IQ4_XS decoders, made by a second implementation.

Writes random but valid blocks (f16 scales of both signs, zero and subnormal among them; every
low nibble and high pair of the 6-bit IQ4_XS sub-block scales; every 4-bit index) and their float32 values as decoded by gguf-py,
llama.cpp's own Python package (gguf.quants.dequantize), to
gguf/src/test/resources/ggufpy/{IQ4_NL,IQ4_XS}.{bin,f32}: 1024 values each, little-endian.

    pip download gguf==0.19.0 --no-deps -d /tmp/ggufpy && unzip /tmp/ggufpy/*.whl -d /tmp/ggufpy/whl
    PYTHONPATH=/tmp/ggufpy/whl python3 tools/codecs/iq4_vectors.py
"""
import pathlib

import numpy as np
from gguf import GGMLQuantizationType
from gguf.quants import dequantize

OUT = pathlib.Path(__file__).resolve().parents[2] / "gguf/src/test/resources/ggufpy"
rng = np.random.default_rng(20261130)


def scales(n):
    d = rng.uniform(0.0005, 0.05, n) * rng.choice([-1.0, 1.0], n)
    d[-1], d[1], d[2] = 0.0, 3.0e-6, -1.0e-7  # zero, and two f16 subnormals
    return d.astype(np.float16)


def nl_blocks(n):
    out = bytearray()
    for d in scales(n):
        out += d.tobytes() + rng.integers(0, 256, 16, dtype=np.uint8).tobytes()
    return bytes(out)


def xs_blocks(n):
    out = bytearray()
    for b, d in enumerate(scales(n)):
        i = np.arange(8)
        ls = 8 * i + 2 * b + i % 2  # every low nibble and every pair of high bits over the four blocks
        sh = sum(int(ls[i] >> 4) << (2 * i) for i in range(8))
        sl = bytes(int(ls[2 * i] & 15) | int(ls[2 * i + 1] & 15) << 4 for i in range(4))
        out += d.tobytes() + np.uint16(sh).tobytes() + sl + rng.integers(0, 256, 128, dtype=np.uint8).tobytes()
    return bytes(out)


OUT.mkdir(parents=True, exist_ok=True)
for name, qtype, data in (("IQ4_NL", GGMLQuantizationType.IQ4_NL, nl_blocks(32)),
                          ("IQ4_XS", GGMLQuantizationType.IQ4_XS, xs_blocks(4))):
    raw = np.frombuffer(data, dtype=np.uint8).reshape(4, -1)
    values = dequantize(raw, qtype).astype("<f4")
    assert values.shape == (4, 256), values.shape
    (OUT / f"{name}.bin").write_bytes(data)
    (OUT / f"{name}.f32").write_bytes(values.tobytes())
    print(name, len(data), "bytes ->", values.size, "values")
