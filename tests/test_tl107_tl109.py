"""TL107 (constexpr-problem-size) and TL109 (grid-axis-limit) beyond their YAML examples: one finding per spot
that several launches share, and TL109's exemption table against its doc."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.helpers import documented_exemptions, exemption_docs, lint_code, run_cli

# One `**common` dict splatted into three launches (liger's Ascend rms_norm): the row count in it is one
# thing to fix.
SHARED_SPLAT = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def fwd(x_ptr, n_rows: tl.constexpr, BLOCK: tl.constexpr):
        for row in tl.range(0, n_rows):
            tl.store(x_ptr + row * BLOCK + tl.arange(0, BLOCK), 0.0)

    @triton.jit
    def bwd(x_ptr, n_rows: tl.constexpr, BLOCK: tl.constexpr):
        for row in tl.range(0, n_rows):
            tl.store(x_ptr + row * BLOCK + tl.arange(0, BLOCK), 1.0)

    def run(X):
        X = X.view(-1, 128)
        common = dict(n_rows=X.shape[0], BLOCK=128)
        fwd[(1,)](X, **common)
        bwd[(1,)](X, **common)
        fwd[(2,)](X, **common)
    ''')


def test_a_value_shared_by_three_launches_is_reported_once(rules):
    found = [d for d in lint_code(SHARED_SPLAT, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert len(found) == 1
    assert found[0].location.row == SHARED_SPLAT.splitlines().index("    common = dict(n_rows=X.shape[0], BLOCK=128)") + 1
    assert any("2 more matches of this rule reach the same spot" in note for note in found[0].notes)


def test_launches_at_different_spots_are_reported_each(rules):
    code = SHARED_SPLAT.replace("        common = dict(n_rows=X.shape[0], BLOCK=128)\n", "").replace(
        "**common", "n_rows=X.shape[0], BLOCK=128")
    found = [d for d in lint_code(code, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert len(found) == 3
    assert not any("reach the same spot" in note for d in found for note in d.notes)


def test_a_twin_launch_is_reported_once_with_a_note(rules):
    """Two launches of one kernel with the same grid and constexpr values (R157s): the first finding names the
    second, which compiles nothing of its own."""
    code = SHARED_SPLAT.replace("bwd[(1,)](X, **common)", "fwd[(1,)](X.flip(0), **common)")
    found = [d for d in lint_code(code, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert len(found) == 1
    assert any("The launch at line 19 passes the same constexpr values to the same kernel" in note
               for note in found[0].notes), found[0].notes


def test_constexpr_strides_that_grow_with_the_count_are_named(rules):
    """`stride_b = x.stride(0)` of `b, seq_len, d = x.shape` takes a new value with each `seq_len` (R159s judge):
    dropping `tl.constexpr` from `seq_len` alone leaves the recompiles. `x.stride(1)` does not grow with it."""
    code = textwrap.dedent('''
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def scan(x_ptr, y_ptr, seq_len: tl.constexpr, stride_b: tl.constexpr, stride_s: tl.constexpr,
                 stride_yb: tl.constexpr, BLOCK: tl.constexpr):
            b = tl.program_id(0)
            d = tl.arange(0, BLOCK)
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            for t in range(seq_len):
                acc += tl.load(x_ptr + b * stride_b + t * stride_s + d)
            tl.store(y_ptr + b * stride_yb + d, acc)

        def run(x):
            batch, seq_len, d = x.shape
            y = torch.empty(batch, seq_len, d, device=x.device)
            scan[(batch,)](x, y, seq_len, x.stride(0), x.stride(1), y.stride(0), BLOCK=d)
            return y
    ''')
    (found,) = [d for d in lint_code(code, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert "The constexpr strides `stride_b`, `stride_yb` grow with `seq_len` (a later dimension of the tensor): " \
           "drop `tl.constexpr` from them too, or each still compiles once per value." in found.notes, found.notes
    # the stride through a name (R171s: `stride_b, stride_l, stride_d = x.stride(0), x.stride(1), x.stride(2)`)
    named = code.replace("scan[(batch,)](x, y, seq_len, x.stride(0),",
                         "stride_b, stride_s = x.stride(0), x.stride(1)\n    scan[(batch,)](x, y, seq_len, stride_b,")
    assert named != code
    (found,) = [d for d in lint_code(named, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert any(note.startswith("The constexpr strides `stride_b`, `stride_yb` grow") for note in found.notes), found.notes
    # unpacked from `x.stride()` (R175s)
    unpacked = code.replace("scan[(batch,)](x, y, seq_len, x.stride(0), x.stride(1),",
                            "stride_b, stride_s, stride_d = x.stride()\n    scan[(batch,)](x, y, seq_len, stride_b, stride_s,")
    assert unpacked != code
    (found,) = [d for d in lint_code(unpacked, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert any(note.startswith("The constexpr strides `stride_b`, `stride_yb` grow") for note in found.notes), found.notes


def test_constexprs_computed_from_the_count_are_named_too(rules):
    """`n_tiles = triton.cdiv(n_ctx, 128)` and `total = n_ctx + n_text` fed to constexprs vary with `n_ctx`
    (R172s judge): the fix must drop them as well."""
    code = textwrap.dedent('''
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def attn(q_ptr, n_ctx: tl.constexpr, n_tiles: tl.constexpr, TOTAL: tl.constexpr, BLOCK: tl.constexpr):
            for tile in range(tl.program_id(0), n_tiles, 132):
                offs = tile * BLOCK + tl.arange(0, BLOCK)
                tl.store(q_ptr + offs, tl.load(q_ptr + offs, mask=offs < n_ctx) * 2, mask=offs < TOTAL)

        def run(q, n_text):
            n_ctx = q.shape[-2]
            n_tiles = triton.cdiv(n_ctx, 128)
            total = n_ctx + n_text
            attn[(132,)](q, n_ctx, n_tiles, total, BLOCK=128)
    ''')
    (found,) = [d for d in lint_code(code, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert any(note.startswith("Also fed a value that varies with the input: `n_tiles`, `TOTAL`")
               for note in found.notes), found.notes


def test_tl107_doc_lists_exactly_its_exemptions(rules):
    from tritonlint.rules.tl107_constexpr_problem_size import EXEMPTIONS

    assert documented_exemptions(rules, "TL107") == exemption_docs(EXEMPTIONS)


def test_tl109_doc_lists_exactly_its_exemptions(rules):
    from tritonlint.rules.tl109_grid_axis_limit import EXEMPTIONS

    assert documented_exemptions(rules, "TL109") == exemption_docs(EXEMPTIONS)


def test_tl109_one_tile_row_needs_the_same_count(rules):
    """The bucket must be of the count on the axis: a tile over the head dimension exempts nothing."""
    code = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            pass

        def run(x, offsets, max_seq_len, head_dim):
            B = offsets.numel() - 1
            BLOCK = triton.next_power_of_2(max_seq_len)
            k[(B, max_seq_len)](x, BLOCK=BLOCK)
            k[(B, max_seq_len)](x, BLOCK=triton.next_power_of_2(head_dim))
        ''')
    found = [d for d in lint_code(code, rules, select=["TL109"]).diagnostics if d.code == "TL109"]
    assert [d.location.row for d in found] == [code.splitlines().index(
        "    k[(B, max_seq_len)](x, BLOCK=triton.next_power_of_2(head_dim))") + 1]


# A GEMV under neutral names: the launch passes the activation's features (K = x.shape[-1]) and the leading
# dimension of `codes`, so `codes` reads as the weight laid out [out, in] and N as its output features.
GEMV = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def gemv(x_ptr, w_ptr, out_ptr, M: tl.constexpr, K: tl.constexpr, N: tl.constexpr, BLOCK_K: tl.constexpr):
        tl.store(out_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + tl.arange(0, BLOCK_K)), 0) * N * K * M)

    def linear(x, codes):
        K, N = x.shape[-1], codes.shape[0]
        gemv[(N,)](x, codes, x, 1, K, N, 1024)
    ''')


def _tl107(code: str, rules, options: dict | None = None) -> list[str]:
    return [d.message for d in lint_code(code, rules, select=["TL107"], options=options).diagnostics if d.code == "TL107"]


def test_a_weights_output_features_beside_an_activations_features_are_not_flagged(rules):
    assert _tl107(GEMV, rules) == []
    assert _tl107(GEMV, rules, {"constexpr-size-unbacked": True}) == []  # not a candidate at either level


def test_the_leading_dimension_is_flagged_when_the_launch_passes_another_size_of_its_tensor(rules):
    # codes.shape[1] passed too: `codes` is no longer known to be the other operand of a linear map
    code = GEMV.replace("gemv[(N,)](x, codes, x, 1, K, N, 1024)", "gemv[(N,)](x, codes, x, codes.shape[1], K, N, 1024)")
    assert any("`N`" in m for m in _tl107(code, rules, {"constexpr-size-unbacked": True}))



# TL109's `per-sequence-state` exemption read from another module's kernel: the fact travels in the kernel's
# summary (JitFunction.state_axes), not in its syntax tree.
STATE_KERNEL = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def conv_update(x, cache, y, D: tl.constexpr, W: tl.constexpr, BD: tl.constexpr):
        i_d, i_n = tl.program_id(0), tl.program_id(1)
        o_d = i_d * BD + tl.arange(0, BD)
        b = tl.load(cache + i_n * D * W + o_d * W + 1) + tl.load(x + i_n * D + o_d)
        tl.store(y + i_n * D + o_d, b)
        tl.store(cache + i_n * D * W + o_d * W, b)
    ''')
STATE_LAUNCH = textwrap.dedent('''
    import triton
    from pkg.kernels import conv_update

    def update(x, cache, y):
        D = x.shape[-1]
        N = x.numel() // D
        conv_update[(triton.cdiv(D, 64), N)](x, cache, y, D, 4, 64)
    ''')


def _package_rows(tmp_path, rule: str, kernels: str, launch: str) -> list[tuple[str, int]]:
    """The rows `rule` reports in a package whose `kernels.py` defines the kernels and `ops.py` launches them."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/kernels.py").write_text(kernels)
    (tmp_path / "pkg/ops.py").write_text(launch)
    result = run_cli(".", "--select", rule, "--output-format", "json", "--no-cache", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return [(f["filename"], f["location"]["row"]) for f in json.loads(result.stdout)]


def _tl109_rows(tmp_path, kernels: str) -> list[tuple[str, int]]:
    return _package_rows(tmp_path, "TL109", kernels, STATE_LAUNCH)


def test_tl109_a_state_updated_in_place_exempts_a_kernel_of_another_module(tmp_path):
    assert _tl109_rows(tmp_path, STATE_KERNEL) == []


def test_tl109_a_state_only_read_exempts_nothing(tmp_path):
    read_only = STATE_KERNEL.replace("    tl.store(cache + i_n * D * W + o_d * W, b)\n", "")
    assert read_only != STATE_KERNEL
    assert _tl109_rows(tmp_path, read_only) == [("pkg/ops.py", 8)]


# A kernel of another module is judged on what its module says of it (JitFunction.shape_inputs, in the summary):
# a sequence length used only in masks is a problem size there too; one used as a tile size is not (round R444s).
SEQUENCE_KERNEL = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def scale(x_ptr, seq_len: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < seq_len) * 2, mask=offs < seq_len)
    ''')
SEQUENCE_LAUNCH = textwrap.dedent('''
    import triton
    from pkg.kernels import scale

    def run(x):
        batch, seq_len = x.shape
        scale[(triton.cdiv(seq_len, 128),)](x, seq_len=seq_len, BLOCK=128)
    ''')


@pytest.mark.parametrize("kernel, rows", [(SEQUENCE_KERNEL, [("pkg/ops.py", 7)]),
                                          (SEQUENCE_KERNEL.replace("tl.arange(0, BLOCK)", "tl.arange(0, seq_len)"), [])])
def test_tl107_judges_a_kernel_of_another_module_by_its_own_body(tmp_path, kernel, rows):
    assert _package_rows(tmp_path, "TL107", kernel, SEQUENCE_LAUNCH) == rows


# Strides spread from a copy of the tensor whose shape the launching function unpacks (`q_c = q.contiguous()`,
# `*q_c.stride()`): the spread has that rank, so the arguments after it bind to their parameters (round R450s).
SPREAD_COPY = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def fwd(q_ptr, o_ptr, s_b, s_n, s_d, o_b, o_n, o_d, n_queries: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(o_ptr + offs * o_n, tl.load(q_ptr + offs * s_n, mask=offs < n_queries), mask=offs < n_queries)

    def run(q):
        batch, n_queries, _ = q.shape
        q_c = q.contiguous()
        out = torch.empty_like(q_c)
        fwd[(triton.cdiv(n_queries, 64), batch)](q_c, out, *q_c.stride(), *out.stride(), n_queries, BLOCK=64)
    ''')


def test_tl107_binds_arguments_after_strides_spread_from_a_copy(rules):
    found = [d for d in lint_code(SPREAD_COPY, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert [d.location.row for d in found] == [14]


# TL107 in two levels: a finding is reported by default only where the launch names the value a token or
# sequence count (or flattens it to rows); what only shows it varying (an element count, a grid or an
# allocation over a received tensor, a row count by name) and the rest only with `constexpr-size-unbacked`,
# as info.
UNBACKED = {"constexpr-size-unbacked": True}
TABLE_WIDTH = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def k(p_ptr, W: tl.constexpr, BLOCK: tl.constexpr):
        for i in range(W):
            tl.store(p_ptr + i * BLOCK + tl.arange(0, BLOCK), 0.0)

    def reduce(partials, out):
        k[GRID](partials, partials.shape[0], BLOCK=64)
    ''')


def _tl107_findings(code: str, rules, options: dict | None = None) -> list[tuple[str, list[str]]]:
    result = lint_code(code, rules, select=["TL107"], options=options)
    return [(d.severity, d.notes) for d in result.diagnostics if d.code == "TL107"]


def test_a_bare_leading_dimension_is_reported_only_with_the_unbacked_option(rules):
    code = TABLE_WIDTH.replace("GRID", "(out.shape[0],)")
    assert _tl107_findings(code, rules) == []
    [(severity, notes)] = _tl107_findings(code, rules, UNBACKED)
    assert severity == "info" and any("constexpr-size-unbacked" in n for n in notes)


def test_a_grid_over_the_same_dimension_shows_it_only_with_the_option(rules):
    code = TABLE_WIDTH.replace("GRID", "(partials.shape[0],)")
    assert _tl107_findings(code, rules) == []
    [(severity, notes)] = _tl107_findings(code, rules, UNBACKED)
    assert severity == "info" and any("the launch grid spans it" in n for n in notes)


def test_an_allocation_with_the_value_first_shows_it_only_with_the_option(rules):
    code = TABLE_WIDTH.replace("    k[GRID]", "    y = torch.empty(partials.shape[0], 64)\n    k[(1,)]")
    assert _tl107_findings(code, rules) == []
    [(severity, notes)] = _tl107_findings(code, rules, UNBACKED)
    assert severity == "info" and any("leading size" in n for n in notes)


def test_rows_flattened_by_the_launching_function_are_named(rules):
    code = TABLE_WIDTH.replace("    k[GRID]", "    partials = partials.view(-1, 64)\n    k[(1,)]")
    [(severity, notes)] = _tl107_findings(code, rules)
    assert severity == "warning" and any("flattened to rows" in n for n in notes)


def test_a_tensor_the_function_does_not_receive_is_unbacked(rules):
    # built in the function from a size: its leading dimension says nothing of the call
    code = TABLE_WIDTH.replace("    k[GRID]", "    partials = make_table(out.shape[1])\n    k[(partials.shape[0],)]").replace(
        "def reduce(partials, out)", "def reduce(out)")
    assert _tl107_findings(code, rules) == []
    assert [s for s, _ in _tl107_findings(code, rules, UNBACKED)] == ["info"]


def test_a_token_count_by_name_is_named_and_an_element_count_or_a_row_count_only_shown(rules):
    def named(name: str) -> str:
        return TABLE_WIDTH.replace("GRID", "(1,)").replace("partials.shape[0], BLOCK", f"{name}=partials.shape[0], BLOCK") \
            .replace("W: tl.constexpr", f"{name}: tl.constexpr").replace("range(W)", f"range({name})")
    numel = TABLE_WIDTH.replace("GRID", "(1,)").replace("partials.shape[0]", "partials.numel()")
    assert [s for s, _ in _tl107_findings(named("num_tokens"), rules)] == ["warning"]
    assert [s for s, _ in _tl107_findings(named("seq_len"), rules)] == ["warning"]
    for shown in (numel, named("n_rows")):  # a weight's rows are named rows as often as a batch's
        assert _tl107_findings(shown, rules) == []
        assert [s for s, _ in _tl107_findings(shown, rules, UNBACKED)] == ["info"]


def test_the_launch_names_a_named_parameter_then_a_shown_one_then_an_unbacked_one(rules):
    code = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, b_ptr, NB: tl.constexpr, xnumel: tl.constexpr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)

        def run(x):
            b = make_bias()
            k[(1,)](x, b, b.numel(), x.numel(), BLOCK=64)
        ''')
    result = lint_code(code, rules, select=["TL107"], options=UNBACKED)
    [finding] = [d for d in result.diagnostics if d.code == "TL107"]
    assert "`xnumel`" in finding.message and finding.severity == "info"
    # a token count by name comes before both
    named = code.replace("BLOCK: tl.constexpr)", "n_tokens: tl.constexpr, BLOCK: tl.constexpr)").replace(
        "BLOCK=64)", "x.shape[0], BLOCK=64)")
    for options in (None, UNBACKED):
        [finding] = [d for d in lint_code(named, rules, select=["TL107"], options=options).diagnostics if d.code == "TL107"]
        assert "`n_tokens`" in finding.message and finding.severity == "warning"


def test_do_not_specialize_on_a_constexpr_needs_no_option(rules):
    code = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit(do_not_specialize=["n"])
        def k(x_ptr, n: tl.constexpr):
            tl.store(x_ptr, n)
        ''')
    assert [s for s, _ in _tl107_findings(code, rules)] == ["error"]


# A generic helper's `x.numel()`: fixed per model when every call in the project passes a model's state.
GENERIC_HELPER = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)

    def triton_add(x, out):
        numel = x.numel()
        add_kernel[(triton.cdiv(numel, 1024),)](x, out, numel, BLOCK=1024)
    ''')
SHARD_CALLER = "from ops import triton_add\n\nclass Shard:\n    def reduce(self, out):\n        triton_add(self._grad_shard, out)\n"
ACTIVATION_CALLER = "from ops import triton_add\n\ndef step(activations, out):\n    triton_add(activations, out)\n"
# A received tensor's element count is reported only with the option (as info): the helper's tests set it.
SHOWN_TOO = "[tool.tritonlint]\nconstexpr-size-unbacked = true\n"


def _tl107_rows(repo, *args: str) -> list[tuple[str, int]]:
    result = run_cli(*args, "--select", "TL107", "--output-format", "json", cwd=repo)
    assert result.returncode in (0, 1), result.stderr
    return [(f["filename"], f["location"]["row"]) for f in json.loads(result.stdout)]


def test_a_helper_every_caller_hands_a_models_state_is_no_problem_size(tmp_path):
    (tmp_path / "pyproject.toml").write_text(SHOWN_TOO)
    (tmp_path / "ops.py").write_text(GENERIC_HELPER)
    (tmp_path / "fsdp.py").write_text(SHARD_CALLER)
    assert _tl107_rows(tmp_path, ".") == []
    assert _tl107_rows(tmp_path, "ops.py", "--no-cache") == []  # the callers read as context
    (tmp_path / "train.py").write_text(ACTIVATION_CALLER)  # a module that starts calling it with activations
    assert _tl107_rows(tmp_path, ".") == [("ops.py", 12)]
    (tmp_path / "train.py").unlink()
    assert _tl107_rows(tmp_path, ".") == []


def test_a_helper_nobody_calls_keeps_its_finding(tmp_path):
    (tmp_path / "pyproject.toml").write_text(SHOWN_TOO)
    (tmp_path / "ops.py").write_text(GENERIC_HELPER)
    assert _tl107_rows(tmp_path, ".", "--no-cache") == [("ops.py", 12)]


def test_calls_through_a_star_import_count_too(tmp_path):
    (tmp_path / "pyproject.toml").write_text(SHOWN_TOO)
    (tmp_path / "ops.py").write_text(GENERIC_HELPER)
    (tmp_path / "fsdp.py").write_text(SHARD_CALLER.replace("import triton_add", "import *"))
    assert _tl107_rows(tmp_path, ".", "--no-cache") == []
    (tmp_path / "train.py").write_text(ACTIVATION_CALLER.replace("import triton_add", "import *"))
    assert _tl107_rows(tmp_path, ".", "--no-cache") == [("ops.py", 12)]


KEYED_SEQ_LEN = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=KEY)
    @triton.jit
    def scale(x_ptr, seq_len: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < seq_len) * 2, mask=offs < seq_len)

    def run(x):
        batch, seq_len = x.shape
        scale[(triton.cdiv(seq_len, 64),)](x, seq_len=seq_len)
    ''')


def test_a_constexpr_that_is_also_an_autotune_key_says_so(rules):
    [(_, keyed)] = _tl107_findings(KEYED_SEQ_LEN.replace("KEY", '["seq_len"]'), rules)
    assert any("also an autotune key" in n and "each of the 2 configs" in n for n in keyed)
    [(_, other)] = _tl107_findings(KEYED_SEQ_LEN.replace("KEY", "[]"), rules)
    assert not any("autotune key" in n for n in other)


@pytest.mark.parametrize("unpacking, grid, reported", [
    ("B, S, H, D = x.shape", "(B, S, H)", True),  # the middle S: a sequence length
    ("b, t, c = x.shape", "(b, t)", True),
    ("B, H, D = x.shape", "(B, H)", False),  # a head count
    ("S, B, D = x.shape", "(B, S)", False),  # a leading S is not read as a sequence by its letter alone
    # the first dimensions named one subscript at a time read like an unpacking of them
    ("B = x.shape[0]; T = x.shape[1]; C = x.shape[2]", "(B, T)", True),
    ("B = x.size(0); T = x.size(1); C = x.size(2)", "(B, T)", True),
    ("B = x.shape[0]; T = x.shape[1]", "(B, T)", False),  # T may be the last dimension
    ("T = x.shape[1]; C = x.shape[2]", "(C, T)", False),  # no leading dimension named: not read as an unpacking
    ("B = x.shape[0]; T = y.shape[1]; C = x.shape[2]", "(B, T)", False),  # another tensor's dimension
])
def test_tl109_reads_a_middle_sequence_letter_of_a_shape_unpacking(rules, unpacking, grid, reported):
    code = textwrap.dedent(f"""\
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, y_ptr, stride0, stride1):
            a, b = tl.program_id(0), tl.program_id(1)
            tl.store(y_ptr + a * stride0 + b * stride1, tl.load(x_ptr + a * stride0 + b * stride1))

        def run(x):
            {unpacking}
            y = torch.empty_like(x)
            k[{grid}](x, y, x.stride(0), x.stride(1))
        """)
    codes = [f.code for f in lint_code(code, rules, select=["TL109"]).diagnostics]
    assert codes == (["TL109"] if reported else [])


def test_the_fix_note_names_every_varying_constexpr_of_the_launch(rules):
    """A varying size reported only with the unbacked option (a bare leading dimension) is still named in the
    reported finding's notes: the fix must drop `tl.constexpr` from it too (R85s, R89s judges)."""
    code = textwrap.dedent('''
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def pool_kernel(x_ptr, out_ptr, seq_len: tl.constexpr, n_items: tl.constexpr, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            offs = tl.arange(0, BLOCK)
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            for t in range(seq_len):
                acc += tl.load(x_ptr + (pid * seq_len + t) * BLOCK + offs)
            tl.store(out_ptr + pid * BLOCK + offs, acc / n_items)

        def pool(x):
            n_items, seq_len, width = x.shape
            out = torch.empty((n_items, width), device=x.device)
            pool_kernel[(n_items,)](x, out, seq_len, n_items, BLOCK=width)
            return out
        ''')
    (found,) = [d for d in lint_code(code, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert "`seq_len`" in found.message
    assert any(note.startswith("Also fed a value that varies with the input: `n_items`") for note in found.notes)


# A length read from a received tensor that every call in the project passes unsqueezed there: always 1.
CACHED_ATTN = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def cached_attn(q_ptr, o_ptr, seq_len: tl.constexpr, H: tl.constexpr, D: tl.constexpr):
        offs = ((tl.program_id(0) * seq_len + tl.program_id(1)) * H + tl.program_id(2)) * D + tl.arange(0, D)
        tl.store(o_ptr + offs, tl.load(q_ptr + offs) * 2)

    def attn_with_cache(q):
        num_seqs, seq_len, num_heads, head_dim = q.shape
        out = torch.empty_like(q)
        cached_attn[(num_seqs, seq_len, num_heads)](q, out, seq_len=seq_len, H=num_heads, D=head_dim)
        return out
    ''')
DECODE_CALLER = "\ndef step(q):\n    return attn_with_cache(q.unsqueeze(1))\n"
PREFILL_CALLER = "\ndef prefill(q):\n    return attn_with_cache(q)\n"


def test_a_dimension_every_caller_unsqueezes_is_one(tmp_path):
    (tmp_path / "attn.py").write_text(CACHED_ATTN + DECODE_CALLER)

    def codes() -> list[str]:
        result = run_cli(".", "--select", "TL107,TL109", "--output-format", "json", "--no-cache", cwd=tmp_path)
        assert result.returncode in (0, 1), result.stderr
        return sorted(f["code"] for f in json.loads(result.stdout))

    assert codes() == []
    (tmp_path / "attn.py").write_text(CACHED_ATTN + DECODE_CALLER + PREFILL_CALLER)  # a prefill's queries as they are
    assert codes() == ["TL107", "TL109"]


@pytest.mark.parametrize("tensor, held", [("counts", "counts"), ("lengths", "lengths")])
def test_a_content_read_names_what_the_tensor_holds(rules, tensor, held):
    """`int(counts.max().item())` reads counts, `lengths.max().item()` lengths: the note says which (R184s)."""
    code = textwrap.dedent(f'''
        import triton
        import triton.language as tl

        @triton.jit
        def per_group(x_ptr, MAX_N: tl.constexpr, BLOCK: tl.constexpr):
            for i in tl.range(0, MAX_N):
                tl.store(x_ptr + i * BLOCK + tl.arange(0, BLOCK), 0.0)

        def run(x, {tensor}):
            per_group[(1,)](x, MAX_N=int({tensor}.max().item()), BLOCK=128)
        ''')
    found = [d for d in lint_code(code, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert len(found) == 1
    assert any(f"it is read from the {held} in `{tensor}`" in note for note in found[0].notes), found[0].notes
