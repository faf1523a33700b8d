"""The kernel model: aliases, stacked decorators, autotune configs, launch sites and the constant evaluator."""

from __future__ import annotations

import ast
import textwrap

from tritonlint.analysis.consteval import Binding, Evaluator
from tritonlint.analysis.host import HostScope
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.project import module_name
from tritonlint.analysis.provenance import Provenance


def build(code: str, module: str = "pkg.mod") -> ModuleModel:
    return ModuleModel(ast.parse(textwrap.dedent(code)), module, f"{module}.py")


def test_import_aliases_resolve_to_canonical_names():
    model = build("""
        import triton
        import triton.language as lang
        from triton import jit as triton_jit, Config
        from triton.language import static_range
        from triton.runtime.autotuner import autotune
        import numpy
    """)
    q = lambda src: model.qualify(ast.parse(src, mode="eval").body)
    assert q("lang.static_range") == "triton.language.static_range"
    assert q("static_range") == "triton.language.static_range"
    assert q("triton_jit") == "triton.jit"
    assert q("Config") == "triton.Config"
    assert q("autotune") == "triton.autotune"
    assert q("triton.language.core.constexpr") == "triton.language.constexpr"
    assert q("numpy.zeros") == "numpy.zeros"
    assert q("unknown_name") is None


def test_conventional_tl_without_import_but_not_when_rebound():
    assert build("x = tl.load").qualify(ast.parse("tl.load", mode="eval").body) == "triton.language.load"
    rebound = build("import mylib as tl")
    assert rebound.qualify(ast.parse("tl.load", mode="eval").body) == "mylib.load"


def test_reexported_triton_under_its_conventional_names():
    model = build("from vllm.triton_utils import tl, triton\nfrom mylib import tl_helpers")
    q = lambda src: model.qualify(ast.parse(src, mode="eval").body)
    assert q("tl.static_range") == "triton.language.static_range"
    assert q("triton.jit") == "triton.jit"
    assert q("tl_helpers.x") == "mylib.tl_helpers.x"


def test_a_module_name_bound_to_none_or_an_imported_module_is_that_module():
    model = build("""
        _triton = None
        try:
            import triton
            _triton = triton
        except ImportError:
            pass
        other = None
        if True:
            other = triton
            other = len
    """)
    q = lambda src: model.qualify(ast.parse(src, mode="eval").body)
    assert q("_triton.jit") == "triton.jit"
    assert q("other.jit") == "pkg.mod.other.jit"  # bound to two names: not known


def test_triton_helpers_from_a_module_that_reexports_tl_are_tritons():
    model = build("from gym.tri import tl, jit, cdiv\nfrom numba import jit as numba_jit\nfrom gym.tri import Challenge")
    q = lambda src: model.qualify(ast.parse(src, mode="eval").body)
    assert q("jit") == "triton.jit" and q("cdiv") == "triton.cdiv"
    assert q("numba_jit") == "numba.jit"  # no `tl` beside it
    assert q("Challenge") == "gym.tri.Challenge"  # not a Triton name


def test_stacked_decorators_params_and_autotune():
    model = build("""
        import triton
        import triton.language as tl

        CONFIGS = [triton.Config({"BLOCK_M": bm, "BLOCK_K": 32}, num_warps=w) for bm in (64, 128) for w in [4, 8]]

        @triton.autotune(configs=CONFIGS, key=["M", "N"], reset_to_zero=["c_ptr"])
        @triton.heuristics({"EVEN_K": lambda args: args["K"] % 32 == 0})
        @triton.jit(do_not_specialize=["M"])
        def kernel(a_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr,
                   ACT: "tl.constexpr" = 2):
            pass

        def not_a_kernel():
            pass
    """)
    (kernel,) = model.functions
    assert kernel.qualname == "pkg.mod.kernel"
    assert kernel.constexprs == ["BLOCK_M", "BLOCK_K", "EVEN_K", "ACT"]
    assert kernel.param("ACT").default_value == 2
    tune = kernel.autotune
    assert tune.key == ["M", "N"] and tune.reset_to_zero == ["c_ptr"]
    assert [c.meta["BLOCK_M"] for c in tune.configs] == [64, 64, 128, 128]
    assert [c.num_warps for c in tune.configs] == [4, 8, 4, 8]
    assert tune.tuned_meta == {"BLOCK_M", "BLOCK_K"} and tune.varies("BLOCK_M") and not tune.varies("BLOCK_K")
    assert set(kernel.heuristics) == {"EVEN_K"}


def test_unknown_configs_are_none_not_guessed():
    model = build("""
        import triton
        @triton.autotune(configs=get_configs(), key=[])
        @triton.jit
        def kernel(x):
            pass
    """)
    assert model.functions[0].autotune.configs is None


def test_wrapped_assignment_kernels():
    model = build("""
        import triton
        def _body(x, BLOCK: tl.constexpr):
            pass
        kernel = triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])(triton.jit(_body))
    """)
    kernel = next(f for f in model.functions if f.name == "kernel")
    assert kernel.autotune.tuned_meta == {"BLOCK"}
    assert kernel.constexprs == ["BLOCK"]


def test_launch_sites_resolve_through_imports():
    model = build("""
        import triton
        from .kernels import matmul_kernel
        from . import other
        import pkg.third as third

        @triton.jit
        def local(x):
            pass

        def run(a):
            matmul_kernel[(4,)](a, BLOCK_M=64)
            other.kernel[lambda META: (1,)](a)
            third.k[grid](a)
            local[(1,)](a)
            table["x"](a)
    """, module="pkg.host")
    targets = [launch.target for launch in model.launches]
    assert targets == ["pkg.kernels.matmul_kernel", "pkg.other.kernel", "pkg.third.k", "pkg.host.local", None]
    first = model.launches[0]
    assert first.keyword("BLOCK_M").value == 64 and first.line == 12
    assert model.kernel_for(model.launches[3]) is model.functions[0]


def test_relative_import_from_package_init():
    model = ModuleModel(ast.parse("from .kernels import k"), "pkg", "pkg/__init__.py", is_package=True)
    assert model.imports["k"] == "pkg.kernels.k"


def test_module_constants_fold_and_rebinding_is_unknown():
    model = build("""
        HIDDEN = 1024
        TILES = HIDDEN // 64
        FLAG = True
        X = 1
        X = 2
    """)
    assert model.constants["HIDDEN"].value == 1024
    assert model.constants["TILES"].value == 16
    assert model.constants["FLAG"].value is True
    assert "X" not in model.constants


def evaluate(expr: str, **env: int):
    model = build("import triton\nimport triton.language as tl")
    value = Evaluator({k: Binding(v, "test") for k, v in env.items()}, model.qualify).evaluate(
        ast.parse(expr, mode="eval").body)
    return None if value is None else value.value


def test_constant_evaluator():
    assert evaluate("triton.cdiv(K, BLOCK_K)", K=1000, BLOCK_K=64) == 16
    assert evaluate("tl.cdiv(10, 3) * 2 + 1") == 9
    assert evaluate("triton.next_power_of_2(N)", N=100) == 128
    assert evaluate("META['BLOCK'] << 1", BLOCK=32) == 64
    assert evaluate("max(4, min(A, 16)) - -2", A=8) == 10
    assert evaluate("tl.constexpr(64) // 2") == 32
    assert evaluate("K // 0", K=4) is None
    assert evaluate("unknown + 1") is None
    assert evaluate("2 ** 100000") is None
    assert evaluate("x.shape[0]") is None


def test_evaluator_reports_sources():
    model = build("import triton")
    value = Evaluator({"K": Binding(2048, "module constant"), "B": Binding(64, "config #2")}, model.qualify).evaluate(
        ast.parse("K // B", mode="eval").body)
    assert value.describe() == "K=2048 from module constant, B=64 from config #2"


def test_module_name_from_package_folders(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "k.py").write_text("")
    (tmp_path / "script.py").write_text("")
    assert module_name(tmp_path / "pkg" / "sub" / "k.py") == "pkg.sub.k"
    assert module_name(tmp_path / "pkg" / "__init__.py") == "pkg"
    assert module_name(tmp_path / "script.py") == "script"


def test_hand_over_search_is_linear_on_comment_banners():
    """`(` followed by a long banner of `#`: a pattern that can split the banner in many ways never ends."""
    import time

    text = "f(" + "#" * 3000 + "\n)\n" + "g(  # a comment\n    mod.kernel, grid, x=1)\n"
    model = ModuleModel(ast.parse(text), "m", "m.py", text=text)
    start = time.perf_counter()
    assert model.may_hand_over("kernel") and not model.may_hand_over("other")
    assert time.perf_counter() - start < 1.0


def test_value_reaching_reads_the_assignment_above_the_read():
    model = build("""
    def run(x, n):
        B, T, C = x.shape
        x = x.view(-1, C)
        M, N = x.shape
        y = x.float()
        y = y.contiguous()
        return M, y
    """)
    function = next(node for node in ast.walk(model.tree) if isinstance(node, ast.FunctionDef))
    host = HostScope.of(model, function)
    assert host.value_of("x") is None  # two bindings: the parameter and its view
    assert host.value_reaching("x", 3) is None  # read before the view: the parameter itself
    assert ast.unparse(host.value_reaching("x", 5)) == "x.view(-1, C)"
    assert ast.unparse(host.value_reaching("y", 8)) == "y.contiguous()"  # the later of two plain assignments
    assert host.value_reaching("n", 8) is None  # a parameter never rebound


def _copied_name_kinds(model: ModuleModel) -> dict[str, str]:
    """The provenance kind of each `copy = name` of the module's first function."""
    function = next(node for node in ast.walk(model.tree) if isinstance(node, ast.FunctionDef))
    provenance = Provenance.of(HostScope.of(model, function))
    return {node.targets[0].id: provenance.origin(node.value).kind for node in ast.walk(function)
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Name)}


def test_a_branch_bounds_the_names_its_test_bounds_where_it_runs():
    model = build("""
    def run(a, n):
        m = a.shape[0]
        if m > 1:
            big = m
        else:
            small = m
        if n <= 8:
            few = n
        after = m
    """)
    assert _copied_name_kinds(model) == {"big": "shape", "small": "bounded", "few": "bounded", "after": "shape"}


def test_a_branch_on_a_label_chosen_by_a_bound_runs_where_the_bound_holds():
    model = build("""
    def run(a, stats):
        m = a.shape[0]
        route = "gemv" if m <= 4 else "gemm"
        if route == "gemv":
            small = m
        else:
            big = m
        if route != "gemv":
            big_too = m
        if route == "gemm":
            big_as_well = m
        stats[f"{route}_hits"] += 1
    """)
    assert _copied_name_kinds(model) == {"small": "bounded", "big": "shape", "big_too": "shape", "big_as_well": "shape"}


def test_assigning_into_an_item_or_attribute_rebinds_the_object_not_the_names_its_index_reads():
    model = build("""
    def run(table, key, value, obj):
        table[key] = value
        obj.field[key] += 1
        a, (b, *rest) = value
    """)
    function = next(node for node in ast.walk(model.tree) if isinstance(node, ast.FunctionDef))
    host = HostScope.of(model, function)
    assert host.unbound_parameter("key") and host.unbound_parameter("value")
    assert not host.unbound_parameter("table") and not host.unbound_parameter("obj")
    assert all(host.values[name] == [None] for name in ("a", "b", "rest"))


def test_a_running_total_over_an_argument_is_a_total_of_what_the_caller_passes():
    model = build("""
    def run(items, self_sizes=None):
        total = 0
        for t, h, w in items:
            total += t * h * w
        reset = 0
        for n in items:
            reset += n
        reset = 1
        twice = 0
        for n in items:
            twice += n
        for n in self_sizes.values():
            twice += n
        a = total
        b = reset
        c = twice
    """)
    assert _copied_name_kinds(model) == {"a": "total", "b": "unknown", "c": "unknown"}


def test_a_ceiling_division_written_by_hand_reads_through_to_its_count():
    model = build("""
    def run(x, BLOCK: int = 128):
        n = x.shape[0]
        a = (n + BLOCK - 1) // BLOCK
        b = (n + (BLOCK - 1)) // BLOCK
        c = (n + 127) // 128
        d = (n + BLOCK - 1) // BLOCK * BLOCK
        x2 = x.reshape(-1, 64).contiguous().float()
        rows = x2.shape[0]
    """)
    function = next(node for node in ast.walk(model.tree) if isinstance(node, ast.FunctionDef))
    provenance = Provenance.of(HostScope.of(model, function))
    values = {node.targets[0].id: node.value for node in ast.walk(function) if isinstance(node, ast.Assign)}
    for name in ("a", "b", "c"):
        assert provenance.origin(values[name]).kind == "cdiv", name
        assert provenance.origin(values[name]).parts[0].kind == "shape", name
    d = provenance.origin(values["d"])
    assert d.kind == "product" and d.parts[0].kind == "cdiv"
    assert provenance.origin(values["rows"]).rows  # a copy and a cast keep a tensor's rows


def test_a_function_a_later_def_of_its_name_replaces_is_dead_code():
    """Only a module-level read at import keeps the first definition alive; a function body reads the later one."""
    code = textwrap.dedent("""\
        def k():
            return 1

        def host():
            return k()

        def k():
            return 2

        def kept():
            return 1

        alias = kept

        def kept():
            return 2
        """)
    model = ModuleModel(ast.parse(code), "m", "m.py", text=code)
    assert model.replaced_lines == frozenset({1, 2})


def test_n_is_a_sequence_length_in_the_middle_of_a_layout_that_names_no_other():
    from tritonlint.analysis.provenance import sequence_length

    def reads(unpacking: str) -> bool:
        model = build(f"def run(x):\n    {unpacking} = x.shape\n")
        function = next(node for node in ast.walk(model.tree) if isinstance(node, ast.FunctionDef))
        return sequence_length(Provenance.of(HostScope.of(model, function)).origin(ast.Name("N")))

    assert reads("B, N, C") and reads("B, H, N, D") and reads("B, N, H, D")  # tokens, beside the heads
    assert reads("B, H_q, N, D") and not reads("B, N, T, C") and not reads("B, N, MH, D")  # the heads
    assert not reads("N, C") and not reads("B, C, N")  # a leading or last dimension
    assert reads("B, N, D") and reads("b, N, _") and reads("B, N, hidden")  # tokens of features
    assert not reads("B, N, R")  # the state size of a low-rank state [B, n, r] (round r338s)


def test_a_decorator_of_the_module_that_wraps_its_argument_in_triton_autotune_is_the_kernels_autotune():
    model = build("""
        import os
        import triton
        import triton.language as tl

        def _autotune(fn):
            if os.environ.get("TRITON_INTERPRET") == "1":
                return fn
            return triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (2, 4)], key=["n"])(fn)

        def _layered(fn):
            def inner(g):
                return triton.autotune(configs=[], key=[])(g)
            return inner(fn)

        @_autotune
        @triton.jit
        def kernel(x_ptr, n):
            pass

        @_layered
        @triton.jit
        def other(x_ptr, n):
            pass
    """)
    kernel, other = model.functions
    assert kernel.autotune is not None and kernel.autotune.key == ["n"] and len(kernel.autotune.configs) == 2
    assert other.autotune is None  # a decorator built in layers is not followed


def test_summaries_keep_no_syntax_tree_and_pass_the_cache_loader():
    # the summaries cross processes through the cache's restricted unpickler: an ast node in any field fails there
    from tritonlint.cache import dumps, safe_loads

    model = build('''
        import triton
        import triton.language as tl

        def _configs():
            return [triton.Config({"BLOCK": b}) for b in SIZES if _ok(b)]

        @triton.autotune(configs=_configs(), key=["n"], reset_to_zero=["out"])
        @triton.jit
        def k(x, out, n, BLOCK: tl.constexpr):
            tl.atomic_add(out, tl.sum(tl.load(x + tl.arange(0, BLOCK))))
    ''')
    (kernel,) = model.summaries().values()
    assert kernel.autotune is not None and kernel.autotune.configs is None
    assert safe_loads(dumps(model.summaries())).keys() == model.summaries().keys()


def test_launches_the_host_never_reaches_are_not_launches():
    # `use_fused = True` then `if use_fused: ... return` (round j37b, a homework's unfused fallback left below it)
    code = textwrap.dedent("""
        import triton

        @triton.jit
        def kernel(x):
            pass

        def run(x, fast):
            use_fused = True
            if use_fused:
                return x
            kernel[(1,)](x)

        def always(x):
            if True:
                raise ValueError("unsupported")
            kernel[(2,)](x)

        def after_return(x):
            return x
            kernel[(3,)](x)

        def live(x, fast, flag=True):
            toggled = True
            if fast:
                return x
            if flag:
                return x
            if toggled:
                kernel[(4,)](x)
            toggled = False
            if toggled:
                return x
            kernel[(5,)](x)
    """)
    model = ModuleModel(ast.parse(code), "m", "m.py")
    assert sorted(ast.unparse(site.grid) for site in model.launches) == ["(4,)", "(5,)"]


def test_shape_unpackings_after_a_star_count_from_the_end():
    code = textwrap.dedent("""
        def f(x):
            *batch, n = x.shape
            a, *rest, b = x.shape
            c, d = x.shape[-3:-1]
            *e, g = x.shape[:3]
    """)
    model = ModuleModel(ast.parse(code), "m", "m.py")
    provenance = Provenance(HostScope.of(model, model.tree.body[0]))
    found = {name: index for name, (_, index, *_) in provenance.unpacked.items()}
    assert found == {"n": -1, "a": 0, "b": -1, "c": -3, "d": -2}  # `g` ends a slice short of the end: unknown
