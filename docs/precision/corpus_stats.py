"""Corpus statistics for docs/precision.md, counted with tritonlint's own discovery and kernel model.

    PYTHONPATH=. python docs/precision/corpus_stats.py /work/corpus/src

Prints, per package folder and in total: Python files, files that mention triton (the only ones tritonlint
models), `@triton.jit` functions, autotuned kernels, launch sites `k[grid](...)`, and how many launch sites
resolve to a jit function in their own module or, through imports, in another module of the corpus.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tritonlint.discovery import discover
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.project import module_name
from tritonlint.source import SourceError, read_source

FIELDS = ("files", "mention triton", "jit functions", "autotuned", "launch sites", "resolved here",
          "resolved via imports")


def _model(path: Path) -> tuple[Counter, list[str], list[str]]:
    """Counts for one file, its jit functions' qualified names, and its unresolved launch targets."""
    counts: Counter = Counter(files=1)
    try:
        text = read_source(path).text
    except SourceError:
        return counts, [], []
    if "triton" not in text:
        return counts, [], []
    counts["mention triton"] = 1
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return counts, [], []
    model = ModuleModel(tree, module_name(path.absolute()), str(path), is_package=path.name == "__init__.py")
    own = [f for f in model.functions if f.node is not None and f.name == f.node.name]  # not aliases
    counts["jit functions"] = len(own)
    counts["autotuned"] = sum(f.autotune is not None for f in own)
    counts["launch sites"] = len(model.launches)
    local = [launch for launch in model.launches if model.kernel_for(launch) is not None]
    counts["resolved here"] = len(local)
    others = [launch.target for launch in model.launches if launch not in local and launch.target]
    return counts, [f.qualname for f in own], others


def main(root: Path) -> None:
    files = discover([root], root, excludes=[], respect_gitignore=False).files
    packages = [path.relative_to(root).parts[0] for path in files]
    with ProcessPoolExecutor() as pool:
        results = list(pool.map(_model, files, chunksize=64))
    kernels = {name for _, names, _ in results for name in names}
    totals: dict[str, Counter] = {}
    for package, (counts, _, targets) in zip(packages, results):
        counts["resolved via imports"] = sum(target in kernels for target in targets)
        totals.setdefault(package, Counter()).update(counts)
        totals.setdefault("TOTAL", Counter()).update(counts)
    print("package\t" + "\t".join(FIELDS))
    for package in sorted(totals, key=lambda p: (p == "TOTAL", p)):
        print(package + "\t" + "\t".join(str(totals[package][field]) for field in FIELDS))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
