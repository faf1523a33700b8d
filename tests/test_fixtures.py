"""Tests of the fixture corpus (fixtures/<RULE>-<slug>/) and of its harness.

Every fixture folder is discovered through fixtures.loader, so folders added later (other rules) are picked
up without editing this file. Per-fixture tests are parametrized over FIXTURE_PARAMS; a further per-fixture
test (e.g. "tritonlint reports exactly the `# expect:` markers of slow.py and nothing in fast.py") can be
added beside them with the same parametrization and the helper expected_findings().

Kernels run only in child processes with TRITON_INTERPRET=1 (fixtures.cpu_check, or the bench's CPU dry
run), so the interpreter setting never leaks into this process or other tests.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from fixtures.loader import (  # noqa: E402
    FIXTURES_ROOT, MARKER_RE, FixtureError, discover, expect_markers, load_fixture, load_meta,
)

FIXTURE_DIRS = discover(FIXTURES_ROOT)
FIXTURE_PARAMS = [pytest.param(d, id=d.name) for d in FIXTURE_DIRS]
CPU_CHECK_TIMEOUT_S = 180

# Where RULES.md / the fixture spec put each rule's finding: the marked line must contain this construct.
MARKER_LINE_PATTERNS = {
    "TL001": re.compile(r"^\s*for\s.+\bstatic_range\s*\("),
    "TL002": re.compile(r"\btrans\s*\(|\.T\b|\bpermute\s*\("),
    "TL003": re.compile(r"\btl\.load\s*\("),
    "TL004": re.compile(r"\[\s*[\w.]*grid[\w.]*\s*\]\s*\(|\[[^\]]+\]\s*\("),
    "TL005": re.compile(r"TensorDescriptor|make_tensor_descriptor"),
    "TL006": re.compile(r"@\s*triton\.autotune\s*\("),
    "TL101": re.compile(r"atomic_|store\s*\(|@\s*triton\.autotune"),
    "TL102": re.compile(r"\b(program_id|load)\s*\("),
    "TL103": re.compile(r"make_block_ptr|advance|tl\.math\.|allow_tf32|triton\.ops|experimental"),
    "TL104": re.compile(r"\b(arange|zeros|full|reshape|view|make_tensor_descriptor|TensorDescriptor)\b"),
    "TL105": re.compile(r"make_tensor_descriptor"),
    "TL106": re.compile(r"\[[^\]]+\]\s*\(|TensorDescriptor"),
    "TL107": re.compile(r"\w\[.*\]\s*\(|do_not_specialize"),
    "TL108": re.compile(r"\bload\s*\("),
    "TL109": re.compile(r"\[[^\]]+\]\s*\(|lambda|return"),
    "TL110": re.compile(r"\bkey\s*=|^\s*\[?\s*[\"']|=\s*\[\s*[\"']"),
    "TL111": re.compile(r"\b(program_id|num_programs)\s*\("),
    "TL112": re.compile(r"^\s*@\s*[\w.]*jit\b"),
}


def _child_env() -> dict:
    env = dict(os.environ)
    env["TRITON_INTERPRET"] = "1"
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def expected_findings(fixture_dir: Path) -> dict[str, list[tuple[int, str]]]:
    """{"slow": [(line, rule), ...], "fast": [...]}: the `# expect:` markers, i.e. the findings a linter run
    on each file must report (one marker per finding)."""
    return {side: expect_markers(Path(fixture_dir) / f"{side}.py") for side in ("slow", "fast")}


_cpu_results: dict[str, dict] = {}


def cpu_check(fixture_dir: Path) -> dict:
    """Run fixtures.cpu_check on one folder in a child process (memoized per session)."""
    key = str(fixture_dir)
    if key not in _cpu_results:
        proc = subprocess.run([sys.executable, "-m", "fixtures.cpu_check", str(fixture_dir)], cwd=REPO_ROOT,
                              env=_child_env(), capture_output=True, text=True, timeout=CPU_CHECK_TIMEOUT_S)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("CPU_CHECK_RESULT ")]
        if not lines:
            pytest.fail(f"cpu_check printed no result (exit {proc.returncode})\nstdout:\n{proc.stdout[-3000:]}\n"
                        f"stderr:\n{proc.stderr[-3000:]}")
        result = json.loads(lines[-1][len("CPU_CHECK_RESULT "):])
        result["_stderr"] = proc.stderr[-3000:]
        _cpu_results[key] = result
    return _cpu_results[key]


def test_fixtures_discovered():
    assert FIXTURE_DIRS, "no fixture folders found under fixtures/"


# ---------------------------------------------------------------------------------------------------------------
# per-fixture tests
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fixture_dir", FIXTURE_PARAMS)
def test_fixture_toml_valid(fixture_dir):
    meta = load_meta(fixture_dir)
    assert fixture_dir.name.startswith(meta["rule"] + "-")


@pytest.mark.parametrize("fixture_dir", FIXTURE_PARAMS)
def test_expect_markers(fixture_dir):
    """slow.py: one `# expect: <rule>` marker per finding (at least one) when flagged = true, none when
    false; fast.py: none. Each marker sits on the line RULES.md names for the rule."""
    fx = load_fixture(fixture_dir, import_modules=False)
    found = expected_findings(fixture_dir)
    assert found["fast"] == [], f"fast.py must carry no `# expect:` marker, found {found['fast']}"
    slow = found["slow"]
    wrong_rule = [(ln, r) for ln, r in slow if r != fx.rule]
    assert not wrong_rule, f"slow.py has markers for other rules {wrong_rule} (fixture rule {fx.rule})"
    lines = [ln for ln, _ in slow]
    assert len(lines) == len(set(lines)), f"more than one marker on one line: {slow}"
    if not fx.flagged:
        assert slow == [], f"flagged = false but slow.py has markers {slow}"
        return
    assert slow, f"flagged = true but slow.py has no `# expect: {fx.rule}` marker"
    pattern = MARKER_LINE_PATTERNS.get(fx.rule)
    if pattern is not None:
        text = (fixture_dir / "slow.py").read_text().splitlines()
        for ln, _ in slow:
            code = MARKER_RE.sub("", text[ln - 1])
            assert pattern.search(code), f"slow.py:{ln}: marker not on the {fx.rule} construct: {text[ln - 1]!r}"


@pytest.mark.interpreter
@pytest.mark.parametrize("fixture_dir", FIXTURE_PARAMS)
def test_cpu_interpreter(fixture_dir):
    """Both sides agree with reference() at the "cpu" size within cpu_rtol (Triton interpreter); for
    expectation = "fails" the fast side agrees and the slow side raises or is wrong."""
    res = cpu_check(fixture_dir)
    assert res.get("error") is None, f"cpu_check harness error: {res.get('error')}\n{res.get('traceback', '')}"
    tol = res["cpu_rtol"]
    fast, slow = res["sides"]["fast"], res["sides"]["slow"]
    assert fast["correct"], (f"fast.py wrong on the CPU: rel_err={fast['rel_err']} (cpu_rtol {tol}), "
                             f"error={fast['error']}\n{fast.get('traceback', '')}")
    if res["expectation"] == "fails":
        if not load_fixture(fixture_dir, import_modules=False).cpu_shows_failure:
            assert slow["error"] is None, f"slow.py must run on the CPU: {slow['error']}\n{slow.get('traceback', '')}"
            return  # the failure needs the GPU (fixture.toml says so); the CPU check proves the pair runs
        if slow["correct"]:
            pytest.xfail(f"the interpreter cannot show slow.py's failure at the CPU size: it ran and matched "
                         f"reference() (rel_err={slow['rel_err']:.3g}); the failure is expected on the GPU only")
        return
    assert slow["correct"], (f"slow.py wrong on the CPU: rel_err={slow['rel_err']} (cpu_rtol {tol}), "
                             f"error={slow['error']}\n{slow.get('traceback', '')}")


# ---------------------------------------------------------------------------------------------------------------
# harness tests
# ---------------------------------------------------------------------------------------------------------------

RESULT_KEYS = {"rule", "fixture", "title", "expectation", "flagged", "shape", "dtype", "slow_ms", "fast_ms", "speedup",
               "slow_rel_err", "fast_rel_err", "slow_compile_s", "fast_compile_s", "slow_failure", "fast_failure",
               "ok", "error"}


def _run_bench(args: list[str], timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fixtures.bench", "--device", "cpu", "--quick", *args],
                          cwd=REPO_ROOT, env=_child_env(), capture_output=True, text=True, timeout=timeout)


def _check_report_shape(report: dict) -> None:
    assert set(report) == {"device", "torch", "triton", "python", "date", "quick", "results"}
    assert isinstance(report["device"], str) and isinstance(report["quick"], bool)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", report["date"])
    for r in report["results"]:
        assert set(r) == RESULT_KEYS, set(r) ^ RESULT_KEYS
        assert isinstance(r["ok"], bool)
        for k in ("slow_ms", "fast_ms", "speedup", "slow_rel_err", "fast_rel_err", "slow_compile_s",
                  "fast_compile_s"):
            assert r[k] is None or isinstance(r[k], (int, float)), (k, r[k])
        for k in ("slow_failure", "fast_failure", "error"):
            assert r[k] is None or isinstance(r[k], str), (k, r[k])


@pytest.mark.interpreter
def test_bench_dry_run_one_fixture(tmp_path):
    """The bench's CPU dry run (interpreter, "cpu" sizes) on one real fixture writes well-formed JSON."""
    name = "TL001-static-range-register-only"
    if not (FIXTURES_ROOT / name).is_dir():
        name = FIXTURE_DIRS[0].name
    out = tmp_path / "bench.json"
    proc = _run_bench(["--fixture", name, "--out", str(out)])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"[1/1] {name}" in proc.stdout
    report = json.loads(out.read_text())
    _check_report_shape(report)
    assert report["quick"] is True
    (r,) = report["results"]
    fx = load_fixture(FIXTURES_ROOT / name, import_modules=False)
    assert r["fixture"] == name and r["rule"] == fx.rule and r["expectation"] == fx.expectation
    assert r["title"] == fx.title
    assert r["error"] is None and r["ok"] is True, r
    assert r["slow_ms"] > 0 and r["fast_ms"] > 0 and r["speedup"] == pytest.approx(r["slow_ms"] / r["fast_ms"],
                                                                                       rel=1e-3)
    assert (r["slow_compile_s"] is not None) == fx.measure_compile


_TOY_COMMON = '''
import torch

SIZES = {"cpu": {"N": 64}, "gpu": {"N": 1 << 20}}
DTYPES = {"cpu": torch.float32, "gpu": torch.float32}


def make_inputs(size, device, dtype, seed=0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    return {"x": torch.randn(size["N"], generator=g).to(device=device, dtype=dtype)}


def reference(inputs):
    return inputs["x"].float() * 2
'''

_TOY_TOML = '''rule = "{rule}"
title = "toy"
expectation = "{expectation}"
flagged = false
rtol = 1e-5
cpu_rtol = 1e-5
notes = "harness test"
'''


def _toy_fixture(root: Path, name: str, expectation: str, slow_body: str, fast_body: str) -> Path:
    d = root / name
    d.mkdir()
    (d / "fixture.toml").write_text(_TOY_TOML.format(rule=name.split("-")[0], expectation=expectation))
    (d / "slow.py").write_text(_TOY_COMMON + "\n\ndef run(inputs):\n" + textwrap.indent(slow_body, "    ") + "\n")
    (d / "fast.py").write_text(_TOY_COMMON + "\n\ndef run(inputs):\n" + textwrap.indent(fast_body, "    ") + "\n")
    return d


@pytest.mark.interpreter
def test_bench_records_failures_and_goes_on(tmp_path):
    """A fixture that raises, a fixture that cannot even be imported, and an expected failure are recorded
    as results; the fixtures after them still run. (Pure-torch toy fixtures, run in-process with
    --no-isolate; the per-fixture child processes are covered by test_bench_child_crash_is_recorded.)"""
    _toy_fixture(tmp_path, "TL901-raises", "same", "raise RuntimeError('boom\\nsecond line')",
                 "return inputs['x'] * 2")
    _toy_fixture(tmp_path, "TL902-expected-wrong", "fails", "return inputs['x'] * 3", "return inputs['x'] * 2")
    _toy_fixture(tmp_path, "TL903-expected-raise", "fails", "raise ValueError('Conflicting meta-parameters: X')",
                 "return inputs['x'] * 2")
    bad = _toy_fixture(tmp_path, "TL904-import-error", "same", "return inputs['x'] * 2", "return inputs['x'] * 2")
    (bad / "slow.py").write_text("import torch\nraise ImportError('no such thing')\n")
    _toy_fixture(tmp_path, "TL905-good", "same", "return inputs['x'] * 2", "return (inputs['x'] * 2).clone()")
    out = tmp_path / "bench.json"
    proc = _run_bench(["--root", str(tmp_path), "--out", str(out), "--no-isolate"])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(out.read_text())
    _check_report_shape(report)
    res = {r["fixture"]: r for r in report["results"]}
    assert list(res) == ["TL901-raises", "TL902-expected-wrong", "TL903-expected-raise", "TL904-import-error",
                         "TL905-good"]

    r = res["TL901-raises"]
    assert r["ok"] is False and r["slow_failure"] == "RuntimeError: boom" and r["slow_ms"] is None
    assert r["fast_ms"] is not None and r["speedup"] is None

    r = res["TL902-expected-wrong"]
    assert r["ok"] is True and r["slow_rel_err"] == pytest.approx(0.5) and r["slow_ms"] is None
    assert r["slow_failure"].startswith("wrong result: relative error 0.5")

    r = res["TL903-expected-raise"]
    assert r["ok"] is True and r["slow_failure"] == "ValueError: Conflicting meta-parameters: X"
    assert r["slow_rel_err"] is None and r["fast_rel_err"] == 0.0

    r = res["TL904-import-error"]
    assert r["ok"] is False and "ImportError: no such thing" in r["error"]

    r = res["TL905-good"]
    assert r["ok"] is True and r["error"] is None and r["speedup"] is not None
    assert "3/5 ok" in proc.stdout


@pytest.mark.interpreter
def test_bench_child_crash_is_recorded(tmp_path):
    """A fixture whose process dies (as with a sticky CUDA error) is recorded and the next one runs."""
    _toy_fixture(tmp_path, "TL911-crash", "same", "import os\nos._exit(7)", "return inputs['x'] * 2")
    _toy_fixture(tmp_path, "TL912-good", "same", "return inputs['x'] * 2", "return inputs['x'] * 2")
    out = tmp_path / "bench.json"
    proc = _run_bench(["--root", str(tmp_path), "--out", str(out)])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = {r["fixture"]: r for r in json.loads(out.read_text())["results"]}
    assert res["TL911-crash"]["ok"] is False and "exited with code 7" in res["TL911-crash"]["error"]
    assert res["TL912-good"]["ok"] is True


# ---------------------------------------------------------------------------------------------------------------
# loader and interpreter-stub tests
# ---------------------------------------------------------------------------------------------------------------

def test_loader_rejects_bad_toml(tmp_path):
    d = _toy_fixture(tmp_path, "TL921-bad", "same", "return inputs['x'] * 2", "return inputs['x'] * 2")
    toml = d / "fixture.toml"
    good = toml.read_text()
    cases = {
        good + 'speedup = 2.0\n': "unknown key(s) speedup",
        good.replace('expectation = "same"', 'expectation = "faster"'): "expectation must be one of",
        good.replace('rule = "TL921"', 'rule = "TL001"'): "folder is named for TL921",
        good.replace("flagged = false\n", ""): "missing required key 'flagged'",
        good.replace("rtol = 1e-5\ncpu", "rtol = true\ncpu"): "key 'rtol' must be",
        good.replace("cpu_rtol = 1e-5", "cpu_rtol = -1.0"): "cpu_rtol must be a positive",
        "rule = ": "invalid TOML",
    }
    for text, message in cases.items():
        toml.write_text(text)
        with pytest.raises(FixtureError, match=re.escape(message)):
            load_meta(d)


def test_loader_discovery_and_interface(tmp_path):
    _toy_fixture(tmp_path, "TL931-ok", "same", "return inputs['x'] * 2", "return inputs['x'] * 2")
    (tmp_path / "results").mkdir()
    (tmp_path / "not-a-fixture").mkdir()
    assert [p.name for p in discover(tmp_path)] == ["TL931-ok"]
    assert discover(tmp_path, rule="TL932") == []
    fx = load_fixture(tmp_path / "TL931-ok")
    assert fx.slow is not fx.fast and fx.slow.__name__ != fx.fast.__name__
    assert fx.rule == "TL931" and fx.expectation == "same" and fx.measure_compile is False

    (tmp_path / "TL933-incomplete").mkdir()
    (tmp_path / "TL933-incomplete" / "slow.py").write_text("")
    with pytest.raises(FixtureError, match="missing fast.py, fixture.toml"):
        discover(tmp_path)

    d = _toy_fixture(tmp_path, "TL934-no-reference", "same", "return inputs['x']", "return inputs['x']")
    (d / "fast.py").write_text((d / "fast.py").read_text().replace("def reference(", "def _reference("))
    with pytest.raises(FixtureError, match=r"fast.py: missing function reference\(\)"):
        load_fixture(d)
    d = _toy_fixture(tmp_path, "TL935-bf16-cpu", "same", "return inputs['x']", "return inputs['x']")
    for side in ("slow.py", "fast.py"):
        (d / side).write_text((d / side).read_text().replace('"cpu": torch.float32', '"cpu": torch.bfloat16'))
    with pytest.raises(FixtureError, match="must not be bfloat16"):
        load_fixture(d)


@pytest.mark.interpreter
def test_interpreter_autotune_stub_keeps_conflict_check():
    """With the stub, a multi-config autotuned kernel runs in the interpreter, and Triton's own
    "Conflicting meta-parameters" error still fires for a launch that passes a tuned meta-parameter."""
    script = textwrap.dedent('''
        from fixtures.interp import enable_interpreter, install_autotune_stub
        enable_interpreter()
        install_autotune_stub()
        import torch, triton, triton.language as tl

        @triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
        @triton.jit
        def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

        x = torch.randn(100)
        y = torch.empty_like(x)
        double[lambda META: (triton.cdiv(100, META["BLOCK"]),)](x, y, 100)
        assert torch.equal(y, x * 2)
        try:  # a new key (n=90), so the tuner benchmarks again and runs its conflict check
            double[(7,)](x, y, 90, BLOCK=16)
        except ValueError as e:
            print("RAISED", str(e).splitlines()[0])
        else:
            print("NO ERROR")
    ''')
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, env=_child_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "RAISED Conflicting meta-parameters: BLOCK." in proc.stdout, proc.stdout


def test_readme_results_table_matches_the_committed_results():
    from fixtures.table import load_table

    readme = (REPO_ROOT / "README.md").read_text()
    block = readme.split("<!-- results -->\n", 1)[1].split("\n<!-- /results -->", 1)[0]
    assert block == load_table(), "README results table is stale: run python -m fixtures.table"


def _run(device: str, *rows: dict) -> dict:
    return {"device": device, "torch": "2.11.0", "triton": "3.6.0", "date": "2026-12-07", "results": list(rows)}


def test_merge_other_device_keeps_the_row_device_and_refuses_timings(tmp_path):
    from fixtures.merge import merge
    from fixtures.table import table

    timed = {"rule": "TL001", "fixture": "TL001-a", "expectation": "slower", "speedup": 2.0, "slow_ms": 2.0,
             "fast_ms": 1.0}
    fails = {"rule": "TL113", "fixture": "TL113-b", "expectation": "fails", "slow_failure": "CompilationError: x"}
    target = tmp_path / "h200.json"
    target.write_text(json.dumps({**_run("NVIDIA H200", timed), "date": "2026-11-30"}))
    run = tmp_path / "run.json"
    run.write_text(json.dumps(_run("NVIDIA H100 80GB HBM3", fails)))
    with pytest.raises(SystemExit, match="device differ"):
        merge(target, [run])
    merge(target, [run], other_device=True)
    merged = {row["fixture"]: row for row in json.loads(target.read_text())["results"]}
    assert merged["TL113-b"]["device"] == "NVIDIA H100 80GB HBM3" and "device" not in merged["TL001-a"]
    text = table(json.loads(target.read_text()))
    assert "CompilationError: x (on NVIDIA H100 80GB HBM3, 2026-12-07)" in text and "2026-12-07 (" not in text
    run.write_text(json.dumps(_run("NVIDIA H100 80GB HBM3", {**timed, "fixture": "TL001-c"})))
    with pytest.raises(SystemExit, match="TL001-c are timed"):
        merge(target, [run], other_device=True)


def test_messages_name_the_card_a_failure_fixture_ran_on(monkeypatch):
    from tritonlint import evidence

    monkeypatch.setattr(evidence, "_provided", _run("NVIDIA H200", {
        "rule": "TL113", "fixture": "TL113-b", "expectation": "fails", "slow_failure": "CompilationError: x",
        "device": "NVIDIA H100 80GB HBM3", "torch": "2.11.0", "triton": "3.6.0", "date": "2026-12-07"}))
    evidence.load.cache_clear()
    try:
        assert evidence.fixture_phrase("TL113-b") == "the slow fixture fails on H100 80GB HBM3: CompilationError: x"
        assert evidence.measured_phrase("TL113") == "the slow fixture fails on H100 80GB HBM3: CompilationError: x"
        assert evidence.evidence_section("TL113").endswith(
            "slow side fails: CompilationError: x (on NVIDIA H100 80GB HBM3, torch 2.11.0, triton 3.6.0, 2026-12-07)")
    finally:
        evidence.load.cache_clear()
