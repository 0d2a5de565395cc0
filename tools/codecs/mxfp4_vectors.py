#!/usr/bin/env python3
"""Reference vectors for dgr's MXFP4 decoder, made by a second implementation.

Writes 32 random blocks (every scale byte class: 0 and 1, whose scales are subnormal, small, 127,
large, and every 4-bit index) and their float32 values as decoded by gguf-py, llama.cpp's own
Python package (gguf.quants.dequantize), to gguf/src/test/resources/ggufpy/MXFP4.{bin,f32}:
1024 values, little-endian.

    pip download gguf==0.19.0 --no-deps -d /tmp/ggufpy && unzip /tmp/ggufpy/*.whl -d /tmp/ggufpy/whl
    PYTHONPATH=/tmp/ggufpy/whl python3 tools/codecs/mxfp4_vectors.py
"""
import pathlib

import numpy as np
from gguf import GGMLQuantizationType
from gguf.quants import dequantize

OUT = pathlib.Path(__file__).resolve().parents[2] / "gguf/src/test/resources/ggufpy"
rng = np.random.default_rng(20261130)

scales = [0, 1, 2, 100, 120, 127, 128, 140, 200, 254] + list(rng.integers(110, 140, 22))
blob = bytearray()
for e in scales:
    blob.append(int(e))
    blob.extend(rng.integers(0, 256, 16, dtype=np.uint8).tobytes())
values = dequantize(np.frombuffer(bytes(blob), dtype=np.uint8), GGMLQuantizationType.MXFP4).astype("<f4")
assert values.size == 1024
OUT.mkdir(parents=True, exist_ok=True)
(OUT / "MXFP4.bin").write_bytes(bytes(blob))
(OUT / "MXFP4.f32").write_bytes(values.tobytes())
print("wrote", OUT / "MXFP4.bin", len(blob), "bytes,", values.size, "values")
