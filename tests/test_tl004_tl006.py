"""TL004 (autotune-frozen-block) and TL006 (autotune-missing-key) beyond their YAML examples: launches of
kernels from other modules (in-process and through the process pool), same-named modules in unrelated
folders, options, comments, fix layouts, and the GPU fixtures when they are present."""

from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path

import pytest

from tests.helpers import ROOT, documented_exemptions, exemption_docs, lint_code, run_cli
from tritonlint.analysis.host import remove_arguments
from tritonlint.analysis.project import Project, source_root
from tritonlint.results import FixMode
from tritonlint.analysis.model import ModuleModel
from tritonlint.source import ParsedFile, SourceText

KERNELS = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
    @triton.jit
    def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
    """)
PLAIN_KERNELS = KERNELS.replace('@triton.autotune(configs=[triton.Config({"BLOCK": 256}), '
                                'triton.Config({"BLOCK": 1024})], key=["n"])\n', "")
HOST = textwrap.dedent("""\
    import triton
    {imports}


    def scale(x):
        n = x.numel()
        {callee}[lambda META: (triton.cdiv(n, META["BLOCK"]),)](x, n, BLOCK=256)
    """)


def _host(imports: str, callee: str) -> str:
    return HOST.format(imports=imports, callee=callee)


def _findings(result) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for finding in json.loads(result.stdout):
        found.setdefault(finding["filename"], []).append(finding)
    return found


def _package(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "kernels.py").write_text(KERNELS)
    (root / "pkg" / "relative.py").write_text(_host("from .kernels import scale_kernel", "scale_kernel"))
    (root / "pkg" / "aliased.py").write_text(_host("import pkg.kernels as K", "K.scale_kernel"))
    (root / "pkg" / "from_package.py").write_text(_host("from pkg import kernels", "kernels.scale_kernel"))
    (root / "pkg" / "dotted.py").write_text(_host("import pkg.kernels", "pkg.kernels.scale_kernel"))
    (root / "pkg" / "absolute.py").write_text(_host("from pkg.kernels import scale_kernel", "scale_kernel"))


# ---- TL004 across modules --------------------------------------------------------------------------------
def test_launches_resolve_through_every_import_form(tmp_path):
    _package(tmp_path)
    result = run_cli(".", "--select", "TL004", "--output-format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    found = _findings(result)
    expected = {f"pkg/{name}.py" for name in ("relative", "aliased", "from_package", "dotted", "absolute")}
    assert set(found) == expected
    for filename, findings in found.items():
        (finding,) = findings
        assert finding["location"]["row"] == 7, filename
        assert any(note.endswith("scale_kernel` is defined at pkg/kernels.py:7.") for note in finding["notes"])
        assert "passes `BLOCK=256`, which configs #1-#2 (256/1024) set too" in finding["message"]


def test_same_module_name_in_unrelated_folders_is_not_confused(tmp_path):
    # a/kernels.py and b/kernels.py are both the top-level module `kernels`; each run.py imports its sibling
    for folder, kernels in (("a", PLAIN_KERNELS), ("b", KERNELS), ("c", PLAIN_KERNELS)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "kernels.py").write_text(kernels)
        (tmp_path / folder / "run.py").write_text(_host("from kernels import scale_kernel", "scale_kernel"))
    result = run_cli(".", "--select", "TL004", "--output-format", "json", cwd=tmp_path)
    assert set(_findings(result)) == {"b/run.py"}, result.stdout
    # linted alone, the folder without the autotuned kernel is clean too
    assert run_cli("a", "c", "--select", "TL004", cwd=tmp_path).returncode == 0


def test_second_pass_through_the_process_pool(tmp_path):
    _package(tmp_path)
    for index in range(30):  # more deferred files than the pool threshold
        (tmp_path / "pkg" / f"host_{index}.py").write_text(_host("from .kernels import scale_kernel", "scale_kernel"))
    result = run_cli(".", "--select", "TL004", "--output-format", "json", "--jobs", "2", cwd=tmp_path)
    found = _findings(result)
    assert len(found) == 35 and all(len(v) == 1 for v in found.values())
    assert all(any(n.endswith("is defined at pkg/kernels.py:7.") for n in v[0]["notes"]) for v in found.values())


def test_first_pass_defers_and_second_pass_uses_summaries(rules):
    kernels = ModuleModel(ast.parse(KERNELS), "pkg.kernels", "pkg/kernels.py")
    host = _host("from .kernels import scale_kernel", "scale_kernel")
    linted = frozenset({"pkg.kernels", "pkg.host"})
    first = lint_code(host, rules, select=["TL004"], filename="pkg/host.py", module="pkg.host",
                      project=Project(linted))
    assert first.deferred == "pkg.kernels" and not first.diagnostics
    second = lint_code(host, rules, select=["TL004"], filename="pkg/host.py", module="pkg.host",
                       project=Project(linted, kernels.summaries()))
    (finding,) = second.diagnostics
    assert "`scale_kernel` is defined at pkg/kernels.py:7." in finding.notes


def test_unlinted_modules_are_never_guessed(rules):
    host = _host("from elsewhere.kernels import scale_kernel", "scale_kernel")
    result = lint_code(host, rules, select=["TL004"], module="pkg.host", project=Project(frozenset({"pkg.host"})))
    assert result.deferred is None and not result.diagnostics


def test_source_root():
    assert source_root("b/kernels.py", "kernels") == "b"
    assert source_root("src/pkg/ops/mm.py", "pkg.ops.mm") == "src"
    assert source_root("src/pkg/__init__.py", "pkg") == "src"
    assert source_root("kernels.py", "kernels") == ""


# ---- TL004 fixes ------------------------------------------------------------------------------------------
def _removed(code: str, names: set[str]) -> str:
    code = textwrap.dedent(code)
    tree = ast.parse(code)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript))
    parsed = ParsedFile("x.py", SourceText(code, "utf-8", False, "\n"), tree, "x")
    doomed = [kw for kw in call.keywords if kw.arg in names] + [a for a in call.args if ast.unparse(a) in names]
    for start, end, content in sorted(remove_arguments(parsed, call, doomed), reverse=True):
        code = code[:start] + content + code[end:]
    ast.parse(code)
    return code


@pytest.mark.parametrize(("before", "names", "after"), [
    ("k[g](x, n, BLOCK=1)\n", {"BLOCK"}, "k[g](x, n)\n"),
    ("k[g](x, BLOCK=1, n=n)\n", {"BLOCK"}, "k[g](x, n=n)\n"),
    ("k[g](BLOCK=1, n=n)\n", {"BLOCK"}, "k[g](n=n)\n"),
    ("k[g](BLOCK=1, num_warps=4)\n", {"BLOCK", "num_warps"}, "k[g]()\n"),
    ("k[g](x, BLOCK=1,)\n", {"BLOCK"}, "k[g](x,)\n"),
    ("k[g](\n    x,\n    BLOCK=1,  # tile\n    num_warps=4,\n)\n", {"BLOCK"}, "k[g](\n    x,\n    num_warps=4,\n)\n"),
    ("k[g](\n    x,\n    BLOCK=1\n)\n", {"BLOCK"}, "k[g](\n    x,\n)\n"),
    ("k[g](\n    x, n,\n    BLOCK=1, num_warps=4,\n)\n", {"BLOCK", "num_warps"}, "k[g](\n    x, n,\n)\n"),
    ("k[g](x,\n     BLOCK=1)\n", {"BLOCK"}, "k[g](x)\n"),
    ("k[g](x, n, 128)\n", {"128"}, "k[g](x, n)\n"),
])
def test_argument_removal_keeps_the_call_well_formed(before, names, after):
    assert _removed(before, names) == after


def test_frozen_tiles_get_a_suggestion_and_no_fix(rules):
    code = (ROOT / "rules" / "TL004-autotune-frozen-block.yaml").read_text()
    assert "tune only warps and stages (warning, no fix)" in code  # the YAML example covers the message
    rule = next(r for r in rules if r.id == "TL004")
    example = next(e for e in rule.invalid if "warning, no fix" in e.code)
    (finding,) = lint_code(example.code, rules, select=["TL004"]).diagnostics
    assert finding.severity == "warning" and finding.fix is None
    assert "the configs tune only warps/stages" in finding.message
    assert "move BLOCK_M/BLOCK_N/BLOCK_K into the configs" in finding.notes[0]


# ---- TL006 options, comments, fix layouts --------------------------------------------------------------------
ROWSUM = textwrap.dedent("""\
    import triton
    import triton.language as tl


    {comment}@triton.autotune(
        configs=[triton.Config({{"BLOCK_N": 256}}), triton.Config({{"BLOCK_N": 1024}})],
        key={key},
    )
    @triton.jit
    def row_sum(x_ptr, out_ptr, M, N, BLOCK_N: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            acc += tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        tl.store(out_ptr + row, tl.sum(acc))
    """)


def _rowsum(key: str = '["M"]', comment: str = "") -> str:
    return ROWSUM.format(key=key, comment=comment)


def test_key_ignore_option_in_process_and_from_config(tmp_path, rules):
    (finding,) = lint_code(_rowsum(), rules, select=["TL006"]).diagnostics
    assert finding.location.row == 5 and "leaves out N:" in finding.message
    assert "N sets the trip count of `for start in range(0, N, BLOCK_N)` at line 13." in finding.notes
    assert not lint_code(_rowsum(), rules, select=["TL006"], options={"autotune-key-ignore": ["N"]}).diagnostics
    (tmp_path / "k.py").write_text(_rowsum())
    assert run_cli("k.py", "--select", "TL006", "--fail-level", "info", cwd=tmp_path).returncode == 1  # an info finding
    (tmp_path / "tritonlint.toml").write_text('autotune-key-ignore = ["N"]\n')
    assert run_cli("k.py", "--select", "TL006", cwd=tmp_path).returncode == 0
    (tmp_path / "tritonlint.toml").write_text('autotune-key-ignore = "N"\n')
    bad = run_cli("k.py", "--select", "TL006", cwd=tmp_path)
    assert bad.returncode == 2 and "autotune-key-ignore" in bad.stderr


@pytest.mark.parametrize(("comment", "flagged"), [
    ("# N is not in the key: every caller uses N=4096\n", False),
    ("# key on M only; the row length is fixed by the model config\n", False),
    ("# tiles for skinny-N problems\n", True),  # mentions N, but says nothing about the key
    ("# autotune over the row block\n", True),
])
def test_a_comment_about_the_key_explains_an_omission(comment, flagged, rules):
    result = lint_code(_rowsum(comment=comment), rules, select=["TL006"])
    assert bool(result.diagnostics) is flagged


@pytest.mark.parametrize(("key", "fixed"), [
    ('["M"]', '["M", "N"]'),
    ("['M']", "['M', 'N']"),
    ("[]", '["N"]'),
    ("()", '("N",)'),
    ('["M",]', '["M", "N",]'),
    ('[\n        "M",\n        "BLOCK_N",\n    ]', '[\n        "M",\n        "BLOCK_N",\n        "N",\n    ]'),
    ('[\n        "M"\n    ]', '[\n        "M",\n        "N"\n    ]'),
    ('[\n        "M", "BLOCK_N"\n    ]', '[\n        "M", "BLOCK_N", "N"\n    ]'),
])
def test_key_fix_keeps_the_list_style(key, fixed, rules):
    result = lint_code(_rowsum(key=key), rules, select=["TL006"], mode=FixMode.DIFF, unsafe=True)
    assert result.fixed == _rowsum(key=fixed)
    assert not lint_code(result.fixed, rules, select=["TL006"]).diagnostics


def test_a_kernel_without_a_launch_in_view_is_reported_as_info(rules):
    (unseen,) = lint_code(_rowsum(), rules, select=["TL006"]).diagnostics  # launched from another module, if at all
    assert unseen.severity == "info" and any("No launch of this kernel" in note for note in unseen.notes)
    launched = _rowsum() + "\n\ndef row_sums(x, out):\n    M, N = x.shape\n    row_sum[(M,)](x, out, M, N)\n"
    (seen,) = lint_code(launched, rules, select=["TL006"]).diagnostics
    assert seen.severity == "warning" and not any("No launch of this kernel" in note for note in seen.notes)


def test_shared_key_list_is_reported_without_a_fix(rules):
    code = _rowsum(key="KEYS").replace("@triton.autotune(", 'KEYS = ["M"]\n\n\n@triton.autotune(', 1)
    code += "\n\nOTHER_KEYS = KEYS\n"
    (finding,) = lint_code(code, rules, select=["TL006"]).diagnostics
    assert finding.fix is None and any("shared" in note for note in finding.notes)
    assert 'autotune key `KEYS = ["M"]` leaves out N' in finding.message


def test_launches_in_the_module_decide_whether_a_flag_varies(rules):
    kernel = textwrap.dedent("""\
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
        @triton.jit
        def act_kernel(x_ptr, w_ptr, n, HAS_W: tl.constexpr, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
            if HAS_W:
                x *= tl.load(w_ptr + offs, mask=offs < n)
            tl.store(x_ptr + offs, x, mask=offs < n)


        def act(x, w):
            grid = lambda META: (triton.cdiv(x.numel(), META["BLOCK"]),)
            act_kernel[grid](x, w, x.numel(), HAS_W={value})
        """)
    assert not lint_code(kernel.replace("{value}", "w is not None"), rules, select=["TL006"]).diagnostics  # None-ness
    assert not lint_code(kernel.replace("{value}", "True"), rules, select=["TL006"]).diagnostics  # one constant
    (finding,) = lint_code(kernel.replace("{value}", "w.numel() > 1"), rules, select=["TL006"]).diagnostics
    assert "HAS_W selects a code path in `if HAS_W:` at line 10." in finding.notes


# ---- the GPU fixtures (present once the fixture branch is merged) ------------------------------------------
FIXTURES = sorted(p for p in (ROOT / "fixtures").glob("TL00[46]-*") if p.is_dir())


@pytest.mark.skipif(not FIXTURES, reason="no TL004/TL006 fixtures in this checkout")
@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_fixtures_slow_is_flagged_where_marked_and_fast_is_clean(fixture, rules):
    code = fixture.name[:5]
    slow = (fixture / "slow.py").read_text()
    expected = [row for row, line in enumerate(slow.splitlines(), 1) if re.search(rf"#\s*expect:\s*{code}", line)]
    assert sorted(d.location.row for d in lint_code(slow, rules, select=[code]).diagnostics) == expected
    assert not lint_code((fixture / "fast.py").read_text(), rules, select=[code]).diagnostics




# ---- the kernel-model additions these rules rely on -----------------------------------------------------------
def test_model_reads_program_tiles_and_configs_from_a_local_function():
    model = ModuleModel(ast.parse(textwrap.dedent("""\
        import triton
        import triton.language as tl

        def get_autotune_config():
            \"\"\"Tile shapes.\"\"\"
            return [triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}), triton.Config({"BLOCK_M": 128, "BLOCK_N": 64})]

        @triton.autotune(configs=get_autotune_config(), key=["M", "N"])
        @triton.jit
        def kernel(x_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP: tl.constexpr):
            pid = tl.program_id(0)
            pid_m, pid_n = pid // GROUP, pid % GROUP
            rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            cols = tl.program_id(axis=1) * BLOCK_N + tl.arange(0, BLOCK_N)
            tl.store(x_ptr + rows[:, None] * N + cols[None, :], 0.0)
        """)), "pkg.mod", "pkg/mod.py")
    (kernel,) = model.functions
    assert kernel.tiles == {0: ("BLOCK_M",), 1: ("BLOCK_N",)}
    assert [c.meta["BLOCK_M"] for c in kernel.autotune.configs] == [64, 128]
    assert kernel.summary().tiles == kernel.tiles


def test_double_star_kwargs_at_a_launch_are_not_positional(rules):
    """`**pdl_kwargs` after the last positional argument once mapped onto the next parameter (a tuned
    BLOCK_SIZE_K), a false TL004 found in vllm."""
    code = textwrap.dedent('''\
        import triton
        import triton.language as tl

        @triton.autotune(configs=[triton.Config({"BLOCK_K": 64}), triton.Config({"BLOCK_K": 128})], key=["n"])
        @triton.jit
        def kernel(x_ptr, n, BLOCK_K: tl.constexpr, USE_PDL: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK_K), 0.0)

        def launch(x, use_pdl, pdl_kwargs):
            kernel[(1,)](x, x.numel(), USE_PDL=use_pdl, **pdl_kwargs)
        ''')
    assert lint_code(code, rules, select=["TL004"]).diagnostics == []


def test_tl006_doc_lists_exactly_its_exemptions(rules):
    from tritonlint.rules.tl006_autotune_missing_key import EXEMPTIONS

    assert documented_exemptions(rules, "TL006") == exemption_docs(EXEMPTIONS)
    assert len({e.name for e in EXEMPTIONS}) == len(EXEMPTIONS)


def test_a_launch_argument_rebound_from_itself_ends(rules):
    """`x = x * 2 if double else x` made the None test follow `x` into itself (RecursionError on
    mase_triton's optical linear layer): a name is followed once."""
    code = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["N"])
        @triton.jit
        def kernel(x_ptr, b_ptr, N, USE_BIAS: tl.constexpr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < N)
            if USE_BIAS:
                x += tl.load(b_ptr + offs, mask=offs < N)
            tl.store(x_ptr + offs, x, mask=offs < N)

        def launch(x, bias, double):
            x = x * 2 if double else x
            kernel[(1,)](x, bias if bias is not None else x, x.numel(), USE_BIAS=bias is not None)
    ''')
    result = lint_code(code, rules, select=["TL006"])
    assert result.internal_error is None


def test_a_length_loaded_by_a_helper_of_another_module_is_data(tmp_path):
    """The trip count is what a jit helper of another module returns: a value it loads through the pointer
    argument (attn_gym's `load_ragged_task_count`), through a second helper. Neither the pointer nor the row
    it reads is an omission; a factor the helper multiplies in still is, and the kernel's file alone, linted
    with the project as context, reads the helper the same way."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "ragged.py").write_text(textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def load_chunk_count(chunk_offsets, num_sequences):
            return tl.load(chunk_offsets + num_sequences).to(tl.int64)

        @triton.jit
        def load_task_count(chunk_offsets, num_sequences, subtasks_per_chunk):
            return load_chunk_count(chunk_offsets, num_sequences) * subtasks_per_chunk
    '''))
    (package / "kernel.py").write_text(textwrap.dedent('''
        import triton
        import triton.language as tl

        from pkg.ragged import load_task_count

        @triton.autotune(configs=[triton.Config({"BT": 32}), triton.Config({"BT": 64})], key=["K"])
        @triton.jit
        def chunk_kernel(x_ptr, out_ptr, chunk_offsets, num_sequences, subtasks, K, BT: tl.constexpr):
            n_tasks = load_task_count(chunk_offsets, num_sequences, subtasks)
            offs = tl.arange(0, BT)
            for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                tl.store(out_ptr + task * BT + offs, tl.load(x_ptr + task * BT + offs))

        def chunk(x, out, chunk_offsets, subtasks, K):
            chunk_kernel[(132,)](x, out, chunk_offsets, chunk_offsets.numel() - 1, subtasks, K)
    '''))
    for paths in ([".", ], ["pkg/kernel.py"]):
        result = run_cli(*paths, "--select", "TL006", "--output-format", "json", "--no-cache", cwd=tmp_path)
        findings = json.loads(result.stdout)
        assert [f["message"].split("leaves out ")[1].split(":")[0] for f in findings] == ["subtasks"], paths


def test_tl006_reads_the_names_unevaluable_configs_set(rules):
    # configs from a factory whose loop has an undecidable `if` (round R318s): SPLIT, set by every config, is tuned
    code = textwrap.dedent('''\
        import triton
        import triton.language as tl

        HAS_WAVES = _probe_backend()

        def _configs():
            out = []
            for split in (1, 2, 4):
                out.append(triton.Config({"SPLIT": split}, num_warps=2))
                if HAS_WAVES:
                    out.append(triton.Config({"SPLIT": split, "waves_per_eu": 2}, num_warps=2))
            return out

        @triton.autotune(configs=_configs(), key=["TILE"])
        @triton.jit
        def raster(x_ptr, y_ptr, n_tiles, TILE: tl.constexpr, SPLIT: tl.constexpr):
            acc = tl.zeros([TILE], dtype=tl.float32)
            for t in range(0, n_tiles * SPLIT):
                acc += tl.load(x_ptr + t * TILE + tl.arange(0, TILE))
            tl.store(y_ptr + tl.arange(0, TILE), acc)
    ''')
    (finding,) = lint_code(code, rules, select=["TL006"]).diagnostics
    assert "leaves out n_tiles:" in finding.message and "SPLIT" not in finding.message
