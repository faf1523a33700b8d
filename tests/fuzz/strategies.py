"""Hypothesis strategies for Triton-like modules: kernels under @triton.jit, @triton.autotune and
@triton.heuristics; constexpr parameters with and without defaults; configs as literal lists, comprehensions
and factory functions; host code that builds descriptors and launches kernels through grids, lambdas,
`*args` and `**kwargs`; loops over range, tl.range and tl.static_range; masks, loads, stores, dots,
transposes, descriptors and jit helpers. Then the text itself: syntax errors, odd Unicode in identifiers,
strings and comments, tabs or other indentation widths, CRLF, CR or mixed line endings, a BOM.

A statement is a (depth, text) pair; `render` indents and joins them. The vocabulary is small on purpose
(a handful of names for sizes, blocks and pointers) so that the parts meet: a launch passes what a kernel
takes, a key names what a loop reads, and the rules find something to say."""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

Lines = list[tuple[int, str]]

SIZES = ["M", "N", "K", "n_elements", "S", "H", "H_KV", "D", "stride_am", "seq_len"]
BLOCKS = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "BLOCK", "BLOCK_SIZE", "GROUP"]
FLAGS = ["IS_CAUSAL", "HAS_BIAS", "EVEN_K", "USE_FP8"]
POINTERS = ["x_ptr", "y_ptr", "a_ptr", "b_ptr", "c_ptr", "out_ptr", "Q", "K_ptr", "V"]
# Odd identifiers: non-ASCII letters, a fullwidth letter and a mathematical letter (both NFKC-normalised
# by Python to plain ASCII, so the source text and the ast disagree), combining marks, an Arabic name.
ODD_NAMES = ["ñ", "Ω_ptr", "ｘ", "𝔘", "é́", "ا_ptr", "_", "__", "BLOCK_Ｍ", "ℌ", "µ"]
ODD_TEXT = ["", "ü", "\u200b", "\u2028", "\u00a0", "\t", "😀", "\\x00", "'''", '"', "\\", "{}", "\u202e", "ß"]
POWERS = [1, 2, 16, 32, 64, 128, 256, 1024, 4096, 65536]


_SIZES: dict[int, int] = {}  # id of an _index strategy -> its size, for RandomDraw


@lru_cache(maxsize=None)
def _index(size: int) -> st.SearchStrategy[int]:
    strategy = st.integers(0, size - 1)
    _SIZES[id(strategy)] = size
    return strategy


class RandomDraw:
    """A `draw` that makes the same choices from a seeded random.Random instead of hypothesis's engine, for
    the long run (bench/fuzz_long.py), where the engine's bookkeeping would cost twice the linting and its
    shrinking is not used: `module_of(RandomDraw(seed))` is one module, the same for the same seed."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def __call__(self, strategy: st.SearchStrategy[int]) -> int:
        return self.random.randrange(_SIZES[id(strategy)])


def between(draw: st.DrawFn, low: int, high: int) -> int:
    return low + draw(_index(high - low + 1))


def flip(draw: st.DrawFn) -> bool:
    return draw(_index(2)) == 1


def some(draw: st.DrawFn, items: list, low: int, high: int, unique: bool = True) -> list:
    """A few of `items` (distinct ones unless told), in the order drawn."""
    drawn = [pick(draw, items) for _ in range(between(draw, low, high))]
    return list(dict.fromkeys(drawn)) if unique else drawn


def pick(draw: st.DrawFn, items: list | tuple) -> Any:
    """One of `items`: sampled_from without building a strategy per draw (the cost of the long run)."""
    return items[draw(_index(len(items)))]


def pointer(draw: st.DrawFn) -> str:
    return pick(draw, ODD_NAMES) if between(draw, 0, 4) == 0 else pick(draw, POINTERS)


def expression(draw: st.DrawFn, depth: int = 0) -> str:
    """A scalar or tile expression over the vocabulary."""
    choices = [
        lambda: pick(draw, SIZES + BLOCKS),
        lambda: str(pick(draw, POWERS)),
        lambda: f"tl.cdiv({pick(draw, SIZES)}, {pick(draw, BLOCKS)})",
        lambda: f"tl.arange(0, {pick(draw, BLOCKS)})",
        lambda: f"tl.program_id({between(draw, 0, 2)})",
        lambda: f"{pick(draw, SIZES)} // {pick(draw, BLOCKS)}",
    ]
    if depth < 2:
        choices += [
            lambda: f"({expression(draw, depth + 1)}) {pick(draw, ['+', '*', '-', '//', '%'])} "
                    f"{expression(draw, depth + 1)}",
            lambda: f"{expression(draw, depth + 1)}[:, None]",
            lambda: f"tl.where({expression(draw, depth + 1)} > 0, {expression(draw, depth + 1)}, 0.0)",
        ]
    return pick(draw, choices)()


def load(draw: st.DrawFn) -> str:
    base = pointer(draw)
    offsets = expression(draw)
    if flip(draw):
        rows, cols = pick(draw, BLOCKS), pick(draw, BLOCKS)
        offsets = f"tl.arange(0, {rows})[:, None] * {pick(draw, SIZES)} + tl.arange(0, {cols})[None, :]"
    mask = pick(draw, ["", ", mask=mask", ", mask=mask, other=0.0", f", mask=offs < {pick(draw, SIZES)}"])
    return f"tl.load({base} + {offsets}{mask})"


def kernel_statement(draw: st.DrawFn, depth: int = 1, loops: int = 0) -> Lines:
    """One statement of a kernel body (a loop or a test brings a nested body)."""
    acc, tile = pick(draw, ["acc", "a", "b", "x", "qk"]), pick(draw, ["a", "b", "x", "k", "v"])
    simple = [
        lambda: f"pid = tl.program_id({between(draw, 0, 2)})",
        lambda: f"offs = pid * {pick(draw, BLOCKS)} + tl.arange(0, {pick(draw, BLOCKS)})",
        lambda: f"mask = offs < {pick(draw, SIZES)}",
        lambda: f"{tile} = {load(draw)}",
        lambda: f"{tile} = {load(draw)}.to(tl.float32)",
        lambda: f"tl.store({pointer(draw)} + offs, {acc}{pick(draw, ['', ', mask=mask'])})",
        lambda: f"{acc} = tl.zeros(({pick(draw, BLOCKS)}, {pick(draw, BLOCKS)}), dtype=tl.float32)",
        lambda: f"{acc} = tl.dot({tile}, {pick(draw, ['b', 'k', 'tl.trans(b)', 'b.T', 'v'])}, {acc})",
        lambda: f"{acc} += tl.dot({tile}, {pick(draw, ['b', 'tl.trans(k)', 'k.T'])})",
        lambda: f"{tile} = tl.trans({acc})",
        lambda: f"{tile} = {acc}.T",
        lambda: f"{acc} = {acc} * {pick(draw, ['tl.exp(x)', 'tl.exp2(x)', 'scale', '1.0'])}",
        lambda: f"desc = tl.make_tensor_descriptor({pointer(draw)}, shape=[{pick(draw, SIZES)} * "
                f"{pick(draw, ['H', 'H_KV', 'S'])}, {pick(draw, SIZES)}], strides=["
                f"{pick(draw, SIZES + ['1'])}, 1], block_shape=[{pick(draw, BLOCKS)}, "
                f"{pick(draw, BLOCKS + ['D'])}])",
        lambda: f"{tile} = desc.load([{expression(draw)}, 0])",
        lambda: f"desc.store([{expression(draw)}, 0], {acc})",
        lambda: f"{acc} = {pick(draw, ['helper', '_helper', 'tl.sigmoid', 'gelu', 'utils.act'])}({acc})",
        lambda: f"num_k = {expression(draw)}",
        lambda: pick(draw, ["pass", "return", "continue" if loops else "pass", "tl.debug_barrier()",
                                      f"# {pick(draw, ODD_TEXT)} comment", "...",
                                      f"{acc}, {tile} = {tile}, {acc}", f"tl.static_assert({pick(draw, BLOCKS)} >= 16)"]),
    ]
    nested = [
        lambda: f"for {pick(draw, ['k', 'i', 'start_n', '_'])} in "
                f"{pick(draw, ['range', 'tl.range', 'tl.static_range'])}({loop_bounds(draw)}):",
        lambda: f"for k in tl.range(0, num_k, num_stages={between(draw, 1, 4)}):",
        lambda: f"if {pick(draw, FLAGS + ['pid > 0', 'k == 0', 'not ' + pick(draw, FLAGS)])}:",
        lambda: f"while {pick(draw, ['k < num_k', 'lo < hi', 'True'])}:",
    ]
    if depth < 4 and between(draw, 0, 3) == 0:
        header = pick(draw, nested)()
        inner = loops + header.startswith(("for", "while"))
        body = [kernel_statement(draw, depth + 1, inner) for _ in range(between(draw, 1, 4))]
        lines = [(depth, header)] + [line for statement in body for line in statement]
        if header.startswith("if") and flip(draw):
            lines += [(depth, "else:"), (depth + 1, pick(draw, simple)())]
        return lines
    return [(depth, pick(draw, simple)())]


def loop_bounds(draw: st.DrawFn) -> str:
    stop = pick(draw, [*SIZES, *BLOCKS, "num_k", "tl.cdiv(K, BLOCK_K)", "K // BLOCK_K", "32", "4", "1000",
                                 "BLOCK_K // 16", "-1", "0"])
    return pick(draw, [stop, f"0, {stop}", f"0, {stop}, {pick(draw, ['1', '2', 'BLOCK_N', '-1'])}",
                                 f"{pick(draw, ['lo', '0', 'start'])}, {stop}"])


def parameters(draw: st.DrawFn) -> list[str]:
    pointers = list(dict.fromkeys(pointer(draw) for _ in range(between(draw, 1, 4))))
    sizes = some(draw, SIZES, 0, 4)
    constexprs = some(draw, BLOCKS + FLAGS, 0, 4)
    constexpr = [f"{c}: tl.constexpr" + pick(draw, ["", f" = {pick(draw, POWERS)}", " = False"])
                 for c in constexprs]
    # defaults last, as Python requires (a generator that breaks this writes a syntax error: fine too)
    constexpr.sort(key=lambda p: "=" in p)
    return pointers + sizes + constexpr


def configs(draw: st.DrawFn) -> tuple[str, Lines]:
    """The `configs=` argument of an autotune, and the module-level code it needs (a factory, a list)."""
    block = pick(draw, BLOCKS)

    def config() -> str:
        meta = ", ".join(f'"{b}": {pick(draw, POWERS)}'
                         for b in some(draw, BLOCKS, 0, 3))
        extra = pick(draw, ["", ", num_warps=4", ", num_warps=8, num_stages=3", ", num_stages=2"])
        return f"triton.Config({{{meta}}}{extra})"

    kind = pick(draw, ["list", "comprehension", "factory", "variable", "single", "call"])
    if kind == "list":
        return "[" + ", ".join(config() for _ in range(between(draw, 1, 4))) + "]", []
    if kind == "comprehension":
        return (f'[triton.Config({{"{block}": b}}, num_warps=w) for b in {pick(draw, ["[64, 128]", "(32, 64, 128)", "range(4)"])} '
                f"for w in [4, 8]{pick(draw, ['', ' if b * w < 1024'])}]"), []
    if kind == "factory":
        return "get_configs()", [(0, "def get_configs():"),
                                 (1, pick(draw, ["if os.environ.get('FAST'):", "if True:"])),
                                 (2, f"return [{config()}]"),
                                 (1, f"return [{config()}, {config()}]")]
    if kind == "variable":
        return "CONFIGS", [(0, f"CONFIGS = [{config()}, {config()}]")]
    if kind == "call":
        return f"list(filter(keep, [{config()}]))", []
    return f"[{config()}]", []


def decorators(draw: st.DrawFn, params: list[str]) -> tuple[Lines, Lines]:
    """A kernel's decorators, and module-level code they need."""
    plain = [p.split(":")[0].split("=")[0].strip() for p in params]
    jit = pick(draw, ["@triton.jit", "@jit", "@triton.jit(do_not_specialize=['N'])",
                                "@triton.jit()", "@tl.core.extern" if between(draw, 0, 20) == 0 else "@triton.jit"])
    lines: Lines = [(0, jit)]
    before: Lines = []
    if flip(draw):
        found, before = configs(draw)
        key = ", ".join(f'"{k}"' for k in some(draw, plain + SIZES, 0, 3))
        extra = pick(draw, ["", ", reset_to_zero=['c_ptr']", ", warmup=5, rep=20", ", prune_configs_by={}"])
        layout = pick(draw, ["flat", "multiline"])
        if layout == "flat":
            lines.insert(0, (0, f"@triton.autotune(configs={found}, key=[{key}]{extra})"))
        else:
            lines[0:0] = [(0, "@triton.autotune("), (1, f"configs={found},"), (1, f"key=[{key}],  # key"), (0, ")")]
    if between(draw, 0, 3) == 0:
        target = pick(draw, BLOCKS + FLAGS)
        lines.insert(0, (0, f"@triton.heuristics({{'{target}': lambda args: args['{pick(draw, SIZES)}'] % 16 == 0}})"))
    return lines, before


def kernel(draw: st.DrawFn, kernel_name: str) -> Lines:
    params = parameters(draw)
    decorated, before = decorators(draw, params)
    split = flip(draw) and len(params) > 2
    signature = (f"def {kernel_name}({', '.join(params)}):" if not split else
                 f"def {kernel_name}({', '.join(params[:2])},\n        {', '.join(params[2:])}):")
    body = [line for statement in [kernel_statement(draw) for _ in range(between(draw, 1, 8))] for line in statement]
    docstring = [(1, f'"""{pick(draw, ODD_TEXT)} kernel."""')] if between(draw, 0, 4) == 0 else []
    return before + decorated + [(0, signature)] + docstring + body


def helper(draw: st.DrawFn) -> Lines:
    helper_name = pick(draw, ["helper", "_helper", "gelu"])
    body = [line for statement in [kernel_statement(draw) for _ in range(between(draw, 1, 3))] for line in statement]
    return [(0, "@triton.jit"), (0, f"def {helper_name}(x, {pick(draw, BLOCKS)}: tl.constexpr = 16):")] \
        + body + [(1, "return x")]


def launch(draw: st.DrawFn, kernels: list[str]) -> Lines:
    """A host function that launches one of the module's kernels (or one imported from elsewhere)."""
    target = pick(draw, [*kernels, "other.kernel", "kernels.matmul_kernel"])
    grid = pick(draw, [
        "grid", "(triton.cdiv(n, 128),)", "(M, N)", "lambda META: (triton.cdiv(n, META['BLOCK_SIZE']),)",
        "lambda meta: (triton.cdiv(M, meta['BLOCK_M']) * triton.cdiv(N, meta['BLOCK_N']),)", "(1,)",
    ])
    positional = some(draw, ["x", "y", "out", "n", "M", "N", "K", "q_desc", "k_desc", "x.stride(0)",
                                                "*args", "*((a, b) if c else (0, 0))", "None", "1.0", "True"], 0, 6, unique=False)
    keywords = some(draw, 
        [f"{b}={pick(draw, POWERS)}" for b in BLOCKS] + [f"{f}={pick(draw, ['True', 'False', 'x is None'])}" for f in FLAGS]
        + ["num_warps=4", "num_stages=3", "**kwargs", "**meta", "**{'BLOCK': 64}"], 0, 4)
    arguments = ", ".join(positional + keywords)
    lines: Lines = [(0, f"def {pick(draw, ['launch', 'run', 'forward', '_call'])}(x, y, out, *args, **kwargs):"),
                    (1, "n = x.numel()"),
                    (1, "M, N = x.shape"),
                    (1, "K = y.shape[0]")]
    if flip(draw):
        lines.append((1, "grid = lambda META: (triton.cdiv(n, META['BLOCK']),)"))
    if between(draw, 0, 2) == 0:
        lines += [(1, f"q_desc = TensorDescriptor(x, shape=[M * {pick(draw, ['H', 'H_KV'])}, K], strides=[K, 1], "
                      f"block_shape=[{pick(draw, POWERS)}, K])"),
                  (1, "k_desc = TensorDescriptor.from_tensor(y, [64, K])")]
    lines.append((1, f"{target}[{grid}]({arguments})"))
    if between(draw, 0, 3) == 0:
        lines.append((1, f"return {target}.run({arguments})" if keywords else "return out"))
    return lines


IMPORTS = [
    "import triton", "import triton.language as tl", "from triton import jit", "import torch", "import os",
    "from triton.tools.tensor_descriptor import TensorDescriptor", "from . import kernels",
    "from .kernels import matmul_kernel", "import other", "from triton.language.extra import libdevice",
    "from utils import keep, act as utils", "import triton.language.core as tl_core",
]


def module_lines(draw: st.DrawFn) -> Lines:
    imports = some(draw, IMPORTS, 0, 6)
    if between(draw, 0, 9):  # mostly a proper Triton module
        imports = ["import triton", "import triton.language as tl", *imports]
    lines: Lines = [(0, line) for line in dict.fromkeys(imports)]
    names = some(draw, ["matmul_kernel", "_attn_fwd", "add_kernel", "kernel", "_fused"], 1, 3)
    parts: list[Lines] = [kernel(draw, n) for n in names]
    if flip(draw):
        parts.append(helper(draw))
    parts += [launch(draw, names) for _ in range(between(draw, 0, 2))]
    if between(draw, 0, 5) == 0:
        parts.append([(0, "class Op(torch.autograd.Function):"), (1, "@staticmethod"),
                      (1, "def forward(ctx, x):"), (2, "ctx.BLOCK = 64"), (2, f"{names[0]}[(1,)](x, BLOCK=ctx.BLOCK)")])
    first = between(draw, 0, len(parts) - 1)  # a rotation: helpers and launches before or after the kernels
    order = [*range(first, len(parts)), *range(first)]
    for index in order:
        lines += [(0, "")] + parts[index]
    return lines


def render(lines: Lines, indent: str = "    ") -> str:
    return "".join(f"{indent * depth}{text}\n" for depth, text in lines)


def break_syntax(draw: st.DrawFn, text: str) -> str:
    """The text with one syntax error (or an oddity that is still valid) put in."""
    lines = text.split("\n")
    at = between(draw, 0, max(0, len(lines) - 1))
    how = pick(draw, ["truncate", "paren", "indent", "colon", "string", "keyword", "dedent", "nul"])
    line = lines[at]
    if how == "truncate":
        lines = lines[:at] + [line[: between(draw, 0, len(line))]]
    elif how == "paren":
        lines[at] = line + pick(draw, ["(", ")", "[", "]", "{", "}"])
    elif how == "indent":
        lines[at] = " " * between(draw, 1, 7) + line
    elif how == "colon":
        lines[at] = line.rstrip(":")
    elif how == "string":
        lines[at] = line + pick(draw, ["'", '"""', "f'{", "b'\\u'"])
    elif how == "keyword":
        lines.insert(at, pick(draw, ["def", "lambda:", "return return", "@", "async", "match x:"]))
    elif how == "dedent":
        lines[at] = line.lstrip()
    else:
        lines[at] = line + "\x00"
    return "\n".join(lines)


# Characters for strings and comments: line breaks Python does not count (form feed, U+2028, U+0085),
# controls, a BOM inside the text, combining marks, right-to-left overrides, CJK, astral characters.
ODD_CHARACTERS = ["a", " ", "\t", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029", "\ufeff", "\u0301", "\u202e",
                  "\u200d", "中", "𝔘", "😀", "\x7f", "\\", "'", '"', "#", "\r", "\n", "{", "ǅ", "ﬁ"]


def odd_text(draw: st.DrawFn) -> str:
    """A short string of odd characters, some picked from a list, some any code point but a surrogate."""
    characters = []
    for _ in range(between(draw, 0, 8)):
        if flip(draw):
            characters.append(pick(draw, ODD_CHARACTERS))
        else:
            code = between(draw, 1, 0x10FFFF - 0x800)
            characters.append(chr(code + 0x800 if code >= 0xD800 else code))
    return "".join(characters)


def text_of(draw: st.DrawFn) -> str:
    """A module's text before its encoding: indentation, and perhaps a syntax error."""
    indent = pick(draw, ["    ", "    ", "\t", "  ", "        "])
    text = render(module_lines(draw), indent)
    if between(draw, 0, 7) == 0:
        text = break_syntax(draw, text)
    if between(draw, 0, 9) == 0:  # odd Unicode in a string or comment at the top
        text = f"# {odd_text(draw)}\nLABEL = {odd_text(draw)!r}\n" + text
    return text


def module_of(draw: st.DrawFn) -> bytes:
    """The bytes of a module file: its text with some line-ending style, perhaps a BOM, no final newline,
    form feeds or trailing whitespace."""
    text = text_of(draw)
    newline = pick(draw, ["\n", "\n", "\r\n", "\r", "mixed"])
    if newline == "mixed":
        text = "".join(line + pick(draw, ["\n", "\r\n", "\r"]) for line in text.split("\n"))
    elif newline != "\n":
        text = text.replace("\n", newline)
    if between(draw, 0, 9) == 0:
        text = text.rstrip("\r\n")
    if between(draw, 0, 14) == 0:
        text = text.replace("\n", " \n").replace("\f", "")
    if between(draw, 0, 19) == 0:
        text = "\f" + text
    data = text.encode("utf-8", "surrogatepass")
    if between(draw, 0, 7) == 0:
        data = b"\xef\xbb\xbf" + data
    return data


def project_of(draw: st.DrawFn) -> dict[str, bytes]:
    """A small package tree: a kernels module, modules that import from it and launch, an __init__, copied
    into four packages (the worker pool starts at 24 files)."""
    modules = {"kernels.py": module_of(draw), "__init__.py": b"from .kernels import *\n"}
    for index in range(between(draw, 4, 6)):
        modules[f"ops{index}.py"] = module_of(draw)
    return {f"pkg_{copy}/{path}": data for copy in "abcd" for path, data in modules.items()}


module_bytes = st.composite(module_of)
project = st.composite(project_of)
