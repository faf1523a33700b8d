#!/usr/bin/env python3
"""What the APIs in TL103's table (rules/data/triton-api-versions.yaml) do under each Triton version, run
on the CPU: TL103's evidence, written to fixtures/results/tl103-versions.json.

Each probe runs in a child process of one interpreter per Triton version. Probes that need a kernel run
it in Triton's CPU interpreter (TRITON_INTERPRET=1, torch CPU tensors); the others import the module or
look the name up. A probe records "ok", the warnings raised (category: first line) or the exception
(type: first line).

    # one interpreter with torch and numpy, Triton unpacked per version in its own folder:
    pip install --no-deps --target /tmp/tv/3.9.0 triton==3.9.0
    python bench/triton_versions.py --python /tmp/tv-base/bin/python --triton 3.9.0=/tmp/tv/3.9.0 ...
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "results" / "tl103-versions.json"

# The child: every probe of the installed Triton, one JSON object on the last line of its output.
PROBES = r'''
import contextlib, importlib, io, json, os, sys, warnings
os.environ["TRITON_INTERPRET"] = "1"
result = {}

def first_line(text):
    return (str(text).strip().splitlines() or [""])[0][:300]

def record(name, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                value = fn()
            entry = {"outcome": "ok"}
            if value is not None:
                entry["value"] = value
        except BaseException as exc:
            cause = exc
            while getattr(cause, "__cause__", None) is not None:  # CompilationError wraps the real error
                cause = cause.__cause__
            entry = {"outcome": "error", "exception": f"{type(exc).__name__}: {first_line(exc)}"}
            if cause is not exc:
                entry["cause"] = f"{type(cause).__name__}: {first_line(cause)}"
    own = [w for w in caught if "triton" in (w.filename or "") or issubclass(w.category, DeprecationWarning)
           or "deprecat" in str(w.message).lower()]
    if own:
        entry["warnings"] = sorted({f"{w.category.__name__}: {first_line(w.message)}" for w in own})
    result[name] = entry

import triton
import triton.language as tl
result["triton"] = triton.__version__

def has(obj, dotted):
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True

def need(cond, what):
    if not cond:
        raise AttributeError(what)

record("import triton.ops", lambda: importlib.import_module("triton.ops") and None)
record("import triton.tools.experimental_descriptor",
       lambda: importlib.import_module("triton.tools.experimental_descriptor") and None)
record("import triton.tools.tensor_descriptor", lambda: importlib.import_module("triton.tools.tensor_descriptor") and None)
record("import triton.language.extra.libdevice", lambda: importlib.import_module("triton.language.extra.libdevice") and None)
for name in ("triton.set_allocator",):
    record(name, lambda: need(has(triton, "set_allocator"), "module 'triton' has no attribute 'set_allocator'"))
for name in ("make_tensor_descriptor", "make_block_ptr", "advance", "_experimental_descriptor_load",
             "_experimental_descriptor_store", "_experimental_make_tensor_descriptor", "libdevice"):
    record(f"tl.{name}", lambda name=name: need(has(tl, name), f"module 'triton.language' has no attribute '{name}'"))
for name in ("min", "max"):  # tl.math's two-operand min and max (2.1 to 2.3), not moved to libdevice
    record(f"tl.math.{name}", lambda name=name: need(has(tl, f"math.{name}"),
                                                     f"module 'triton.language.math' has no attribute '{name}'"))
for name in ("experimental_device_tensormap_create1d", "experimental_device_tensormap_create2d",
             "experimental_tensormap_fenceproxy_acquire"):
    record(f"tl.extra.cuda.{name}", lambda name=name: need(
        has(importlib.import_module("triton.language.extra.cuda"), name),
        f"module 'triton.language.extra.cuda' has no attribute '{name}'"))

def driver_defines(name):  # the NVIDIA driver's utils are built for a GPU: read its source on the CPU
    import importlib.util
    spec = importlib.util.find_spec("triton.backends.nvidia.driver")
    need(spec is not None and spec.origin is not None and name in open(spec.origin).read(),
         f"the NVIDIA driver's utils have no attribute '{name}'")

for name in ("fill_1d_tma_descriptor", "fill_2d_tma_descriptor"):
    record(f"driver.active.utils.{name}", lambda name=name: driver_defines(name))
import inspect
record("tl.dot docstring: allow_tf32 *Deprecated*",
       lambda: need("allow_tf32: *Deprecated" in (inspect.getdoc(tl.dot) or ""), "not marked deprecated"))
result["tl.math"] = sorted(n for n in dir(tl.math) if not n.startswith("_") and callable(getattr(tl.math, n))) \
    if hasattr(tl, "math") else None  # Triton 2.0 has no tl.math (its libdevice functions sit in tl.libdevice)
try:
    libdevice = importlib.import_module("triton.language.extra.libdevice")
    result["libdevice"] = sorted(n for n in dir(libdevice) if not n.startswith("_") and callable(getattr(libdevice, n)))
except ImportError:
    result["libdevice"] = None

major_minor = tuple(int(p) for p in triton.__version__.split(".")[:2])
if major_minor >= (3, 6):  # older Triton interpreters predate torch 2.13
    import torch

    @triton.jit
    def block_ptr_copy(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BLOCK_M, BLOCK_N), (1, 0))
        dst = tl.make_block_ptr(y_ptr, (M, N), (N, 1), (0, 0), (BLOCK_M, BLOCK_N), (1, 0))
        for _ in range(0, N, BLOCK_N):
            tl.store(dst, tl.load(src, boundary_check=(0, 1)), boundary_check=(0, 1))
            src = tl.advance(src, (0, BLOCK_N))
            dst = tl.advance(dst, (0, BLOCK_N))

    def run_block_ptr():
        x = torch.arange(16 * 32, dtype=torch.float32).reshape(16, 32)
        y = torch.zeros_like(x)
        block_ptr_copy[(1,)](x, y, 16, 32, BLOCK_M=16, BLOCK_N=16)
        need(torch.equal(x, y), "wrong result")

    @triton.jit
    def dot_tf32(a_ptr, b_ptr, c_ptr, ALLOW: tl.constexpr):
        r = tl.arange(0, 16)
        a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
        b = tl.load(b_ptr + r[:, None] * 16 + r[None, :])
        tl.store(c_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, b, allow_tf32=ALLOW))

    def run_allow_tf32():
        a, b = torch.randn(16, 16), torch.randn(16, 16)
        c = torch.empty(16, 16)
        dot_tf32[(1,)](a, b, c, ALLOW=False)
        need(torch.allclose(c, a @ b, atol=1e-3), "wrong result")

    @triton.jit
    def math_tanh(x_ptr, y_ptr):
        r = tl.arange(0, 16)
        tl.store(y_ptr + r, tl.math.tanh(tl.load(x_ptr + r)))

    def run_math_tanh():
        x = torch.randn(16)
        y = torch.empty(16)
        math_tanh[(1,)](x, y)

    record("interpreter: tl.make_block_ptr / tl.advance loop", run_block_ptr)
    record("interpreter: tl.dot(..., allow_tf32=False)", run_allow_tf32)
    record("interpreter: tl.math.tanh", run_math_tanh)
print("PROBE_RESULT " + json.dumps(result))
'''


def probe(python: str, path: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = path
    env["TRITON_INTERPRET"] = "1"
    proc = subprocess.run([python, "-c", PROBES], env=env, capture_output=True,
                          text=True, timeout=600)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("PROBE_RESULT ")]
    if not lines:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}
    return json.loads(lines[-1].removeprefix("PROBE_RESULT "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="interpreter with torch (CPU) and numpy, no triton")
    parser.add_argument("--triton", action="append", required=True, metavar="VERSION=FOLDER",
                        help="a Triton version and the folder it is installed in (pip install --target)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    versions = {}
    for item in args.triton:
        version, _, folder = item.partition("=")
        print(f"triton {version} ...", flush=True)
        versions[version] = probe(args.python, folder)
    torch_version = subprocess.run([args.python, "-c", "import torch; print(torch.__version__)"],
                                   capture_output=True, text=True).stdout.strip()
    report = {"what": "TL103: Triton APIs under each Triton version, CPU (interpreter or import)",
              "script": "bench/triton_versions.py", "torch": torch_version,
              "python": subprocess.run([args.python, "-c", "import platform; print(platform.python_version())"],
                                       capture_output=True, text=True).stdout.strip(),
              "date": datetime.date.today().isoformat(), "versions": versions}
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
