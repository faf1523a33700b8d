#!/usr/bin/env python3
"""TL103's evidence for module-level globals read inside jit code: for each Triton version, whether its code
generator refuses a plain global (`LOG2E = 1.44`) and one annotated `LOG2E: tl.constexpr = 1.44`, read from the
version's `triton/compiler/code_generator.py` (the name lookup's refusal and `_is_constexpr_global`), and, for the
Triton this interpreter imports, a compile of both forms to Triton IR on the CPU (no GPU). Writes
fixtures/results/tl103-jit-globals.json.

    pip install --no-deps --target /tmp/tv/3.3.0 triton==3.3.0          # one folder per version
    python bench/jit_globals.py /tmp/tv/2.3.1 /tmp/tv/3.0.0 ...          # plus the installed Triton
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "results" / "tl103-jit-globals.json"

KERNEL = '''
import triton
import triton.language as tl
{binding}


@triton.jit
def scale(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * LOG2E)
'''

# Compile `scale` to Triton IR for an sm_90 target with the installed Triton (CPU only), print the outcome.
COMPILE = '''
import importlib.util, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.backends.nvidia.compiler import CUDABackend
from triton.compiler import ASTSource
from triton._C.libtriton import ir
spec = importlib.util.spec_from_file_location("probe", sys.argv[1])
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
fn = module.scale
source = ASTSource(fn, {"x_ptr": "*fp32", "BLOCK": "constexpr"}, constexprs={(1,): 64})
target = GPUTarget("cuda", 90, 32)
backend = CUDABackend(target)
options = backend.parse_options({})
context = ir.context(); ir.load_dialects(context); backend.load_dialects(context)
try:
    source.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), context)
    print("ok")
except Exception as error:  # a CompilationError whose text ends with the NameError it wraps
    refusal = [line for line in str(error).splitlines() if "Cannot access global variable" in line]
    print(f"{type(error).__name__}: " + (refusal[0].strip()[:120] if refusal else str(error).splitlines()[0][:120]))
'''


def from_source(folder: Path) -> dict[str, object]:
    """What a version's code generator does with both forms, read from its source."""
    generator = next(folder.rglob("compiler/code_generator.py"))
    text = generator.read_text()
    version = re.search(r'__version__\s*=\s*["\']([^"\']+)', (folder / "triton" / "__init__.py").read_text())
    refuses = "Cannot access global variable" in text
    checker = text.split("def _is_constexpr_global", 1)[1].split("\n    def ", 1)[0] if refuses else ""
    return {"triton": version[1] if version else folder.name,
            "plain global": "refused (NameError)" if refuses else "accepted",
            "annotated global": "accepted" if not refuses or "__annotations__" in checker else "refused (NameError)",
            "read from": "triton/compiler/code_generator.py"}


def compiled(forms: dict[str, str]) -> dict[str, str]:
    """Both forms compiled with the installed Triton."""
    found = {}
    for form, binding in forms.items():
        path = Path(f"/tmp/jit_globals_{form}.py")
        path.write_text(KERNEL.format(binding=binding))
        run = subprocess.run([sys.executable, "-c", COMPILE, str(path)], capture_output=True, text=True, timeout=300)
        found[form] = (run.stdout.strip().splitlines() or [run.stderr.strip().splitlines()[-1]])[-1]
    return found


def main() -> None:
    import triton

    versions = {}
    for folder in map(Path, sys.argv[1:]):
        entry = from_source(folder)
        versions[entry["triton"]] = entry
    installed = from_source(Path(triton.__file__).parent.parent)
    installed["compiled (CPU, sm_90 target)"] = compiled({
        "plain global": "LOG2E = 1.4426950408889634",
        "annotated global": "LOG2E: tl.constexpr = 1.4426950408889634",
        "tl.constexpr(...)": "LOG2E = tl.constexpr(1.4426950408889634)"})
    versions[installed["triton"]] = installed
    ordered = dict(sorted(versions.items(), key=lambda kv: tuple(int(p) for p in re.findall(r"\d+", kv[0])[:3])))
    OUT.write_text(json.dumps({"what": "TL103: a module-level global read inside @triton.jit code, per Triton version",
                               "script": "bench/jit_globals.py", "python": sys.version.split()[0],
                               "date": datetime.date.today().isoformat(), "versions": ordered}, indent=2) + "\n")
    for version, entry in ordered.items():
        print(version, entry["plain global"], "|", entry["annotated global"],
              entry.get("compiled (CPU, sm_90 target)", ""))


if __name__ == "__main__":
    main()
