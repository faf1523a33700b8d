"""Coverage of the tile-shape analysis (tritonlint/analysis/tiles.py) on a corpus, for docs/precision/TL113.md.

    PYTHONPATH=. python docs/precision/tile_coverage.py /work/corpus/src

Counts the `tl.dot` calls in jit functions and, for each, whether both operands get a shape with every
dimension known: symbolically (ints or constexpr names, no parameter bound), and as numbers in at least one
scenario (constexpr defaults, autotune configs, literal launches), plus the dots in jit helpers (whose tile
parameters are unknown).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

from tritonlint.analysis.model import ModuleModel, module_name
from tritonlint.analysis.tiles import is_kernel, scenario_shapes, tile_shapes
from tritonlint.analysis.triton_names import TL
from tritonlint.discovery import discover
from tritonlint.source import SourceError, read_source
from tritonlint.walk import walk


def _full(shape, numeric: bool) -> bool:
    if shape is None or len(shape) < 2:
        return False
    return all(isinstance(d, int) if numeric else d is not None for d in shape)


def count(path: Path) -> Counter:
    counts: Counter = Counter()
    try:
        text = read_source(path).text
    except SourceError:
        return counts
    if "triton" not in text or "dot" not in text:
        return counts
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return counts
    model = ModuleModel(tree, module_name(path.absolute()), str(path), is_package=path.name == "__init__.py")
    for function in model.functions:
        if function.node is None or function.name != function.node.name:
            continue
        dots = [n for n in walk(function.node) if isinstance(n, ast.Call) and model.qualify(n.func) == f"{TL}.dot"
                and len(n.args) >= 2]
        if not dots:
            continue
        symbolic = tile_shapes(model, function)
        maps = scenario_shapes(model, function)
        kernel = is_kernel(model, function)
        for dot in dots:
            counts["dots"] += 1
            counts["in kernels" if kernel else "in helpers"] += 1
            a, b = dot.args[0], dot.args[1]
            if _full(symbolic.of(a), False) and _full(symbolic.of(b), False):
                counts["symbolic known"] += 1
            if any(_full(m.of(a), True) and _full(m.of(b), True) for m in maps):
                counts["numeric known"] += 1
    return counts


def main(root: str) -> None:
    total: Counter = Counter()
    for path in discover([Path(root)], Path(root), excludes=[], respect_gitignore=False).files:
        total.update(count(path))
    for key in ("dots", "in kernels", "in helpers", "symbolic known", "numeric known"):
        share = f" ({100 * total[key] / total['dots']:.1f}%)" if total["dots"] and key != "dots" else ""
        print(f"{key}: {total[key]}{share}")


if __name__ == "__main__":
    main(sys.argv[1])
