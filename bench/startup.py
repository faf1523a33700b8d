#!/usr/bin/env python3
"""Start-up: how long `tritonlint FILE` takes on one ordinary Triton file, next to `ruff check FILE`.

The file (default: a fixture kernel of ~100 lines) is copied into a scratch project of its own (a
pyproject.toml with an empty `[tool.tritonlint]` table and the file), so that nothing else is discovered.
Runs of the installed console scripts alternate between the cases, so that load from elsewhere on the
machine hits them alike:

- `warm`: `tritonlint FILE` with the cache of a previous run (the file unchanged);
- `no-cache`: `tritonlint --no-cache FILE` (neither reads nor writes the cache: the rule files are
  parsed and validated, the file is linted);
- `empty-cache`: `tritonlint --cache-dir NEW FILE`, a fresh empty cache folder each run (as `no-cache`,
  plus writing the compiled rule set and the results);
- `ruff`: `ruff check FILE` (its cache warm), `ruff-no-cache`: `ruff check --no-cache FILE`;
- `python`: `python -c pass` with tritonlint's interpreter, Python's own start-up.

Wall time and CPU time (user + system, from the child's rusage) per run; medians and 90th percentiles.
It also records `python -X importtime` of a warm run (the modules that cost most), the machine, the load
average before and after, and the commit, into bench/results/startup.json and a section of
bench/RESULTS.md.

    python bench/startup.py                       # 40 rounds
    python bench/startup.py --runs 100 --file path/to/kernel.py
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_FILE = REPO / "fixtures" / "TL005-gqa-descriptor-heads" / "slow.py"
TARGETS_MS = {"warm": 60.0, "no-cache": 100.0, "empty-cache": 100.0}  # issue 15, medians of wall time
BEGIN, END = "<!-- startup:begin -->", "<!-- startup:end -->"


def run_once(command: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall and CPU milliseconds of one run, and its exit code."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    process.returncode = os.waitstatus_to_exitcode(status)
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, process.returncode


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def summary(samples: list[tuple[float, float, int]]) -> dict[str, object]:
    walls, cpus = [s[0] for s in samples], [s[1] for s in samples]
    return {"runs": len(samples), "wall_ms": {"median": round(statistics.median(walls), 1),
                                               "p90": round(percentile(walls, 0.9), 1), "min": round(min(walls), 1)},
            "cpu_ms": {"median": round(statistics.median(cpus), 1), "p90": round(percentile(cpus, 0.9), 1),
                       "min": round(min(cpus), 1)},
            "exit_codes": sorted({s[2] for s in samples})}


def import_profile(python: str, project: Path, name: str, repeats: int = 5) -> dict[str, object]:
    """`-X importtime` of a warm run in-process, the best of `repeats` per module: the top-level imports
    by cumulative time and the modules by their own time."""
    code = f"import sys; sys.argv = ['tritonlint', {name!r}]; from tritonlint.cli import main; main()"
    own: dict[str, int] = {}
    cumulative: dict[str, int] = {}
    depth: dict[str, int] = {}
    for _ in range(repeats):
        lines = subprocess.run([python, "-X", "importtime", "-c", code], cwd=project, capture_output=True,
                               text=True, check=False).stderr.splitlines()
        for line in lines:
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, cumulative_us, module = line.split(":", 1)[1].split("|")
            key = module.strip()
            depth[key] = (len(module) - len(module.lstrip()) - 1) // 2
            own[key] = min(own.get(key, 1 << 40), int(self_us))
            cumulative[key] = min(cumulative.get(key, 1 << 40), int(cumulative_us))
    top = sorted((k for k in cumulative if depth[k] == 0), key=lambda k: -cumulative[k])
    return {"top_level_ms": {k: round(cumulative[k] / 1000, 2) for k in top[:15]},
            "self_ms": {k: round(own[k] / 1000, 2) for k in sorted(own, key=lambda k: -own[k])[:20]},
            "total_ms": round(sum(cumulative[k] for k in top) / 1000, 1),
            "tritonlint_modules": sorted(k for k in own if k.startswith("tritonlint"))}


def machine() -> dict[str, object]:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(), "system": platform.system()}


def commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def version(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "not found"


def markdown(report: dict[str, object]) -> str:
    cases = report["cases"]
    assert isinstance(cases, dict)
    rows = ["| case | command | median wall | p90 wall | median CPU | target |", "| --- | --- | --- | --- | --- | --- |"]
    for name, case in cases.items():
        target = TARGETS_MS.get(name)
        verdict = "" if target is None else f"<= {target:.0f} ms: {'met' if case['wall_ms']['median'] <= target else 'NOT met'}"
        rows.append(f"| {name} | `{case['command']}` | {case['wall_ms']['median']:.1f} ms | {case['wall_ms']['p90']:.1f} ms "
                    f"| {case['cpu_ms']['median']:.1f} ms | {verdict} |")
    imports = report["imports"]
    assert isinstance(imports, dict)
    top = ", ".join(f"{k} {v:.1f}" for k, v in list(imports["top_level_ms"].items())[:8])
    load = report["load_average"]
    assert isinstance(load, dict)
    return "\n".join([
        BEGIN,
        "# Start-up (`bench/startup.py`)",
        "",
        (f"Measured {report['date']} on {report['machine']['cpu']} ({report['machine']['cores']} cores), "  # type: ignore[index]
         f"Python {report['machine']['python']}; tritonlint {report['tritonlint']} (commit {report['commit']}), "  # type: ignore[index]
         f"{report['ruff']}. Load average before/after: {load['before']} / {load['after']}. "
         f"File: `{report['file']}` ({report['lines']} lines) alone in a scratch project with a `pyproject.toml`; "
         f"{report['rounds']} alternating rounds, installed console scripts."),
        "",
        *rows,
        "",
        (f"`python -X importtime` of a warm run (best of 5, ms, cumulative per top-level import): {top}; "
         f"all imports {imports['total_ms']} ms."),
        "",
        "Wall times on a shared machine move with its load; CPU times are the steadier comparison.",
        END,
    ])


def write_section(path: Path, section: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + section + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section + "\n"
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="the Triton file to lint")
    parser.add_argument("--runs", type=int, default=40, help="rounds (each runs every case once)")
    parser.add_argument("--tritonlint", default=str(Path(sys.executable).with_name("tritonlint")),
                        help="the installed console script (default: beside this Python)")
    parser.add_argument("--ruff", default=shutil.which("ruff") or str(Path(sys.executable).with_name("ruff")))
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "startup.json")
    parser.add_argument("--no-markdown", action="store_true", help="leave bench/RESULTS.md alone")
    args = parser.parse_args()

    tritonlint = args.tritonlint
    python = str(Path(tritonlint).resolve().parent / "python")  # the console script's interpreter
    scratch = Path(tempfile.mkdtemp(prefix="tritonlint-startup-"))
    try:
        project = scratch / "project"
        project.mkdir()
        name = "kernel.py"
        shutil.copyfile(args.file, project / name)
        (project / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n\n[tool.tritonlint]\n')
        empty = iter(scratch / f"empty-{i}" for i in range(1 << 30))
        cases = {
            "warm": lambda: [tritonlint, name],
            "no-cache": lambda: [tritonlint, "--no-cache", name],
            "empty-cache": lambda: [tritonlint, "--cache-dir", str(next(empty)), name],
            "ruff": lambda: [args.ruff, "check", name],
            "ruff-no-cache": lambda: [args.ruff, "check", "--no-cache", name],
            "python": lambda: [python, "-c", "pass"],
        }
        for command in (cases["warm"](), cases["ruff"]()):  # fill both caches, and the OS's file cache
            subprocess.run(command, cwd=project, capture_output=True, check=False)
        load_before = [round(x, 2) for x in os.getloadavg()]
        samples: dict[str, list[tuple[float, float, int]]] = {case: [] for case in cases}
        for _ in range(args.runs):
            for case, command in cases.items():
                samples[case].append(run_once(command(), project))
        load_after = [round(x, 2) for x in os.getloadavg()]
        imports = import_profile(python, project, name)
        report = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine(), "load_average": {"before": load_before, "after": load_after},
            "commit": commit(), "tritonlint": version([tritonlint, "--version"]).split()[-1],
            "ruff": version([args.ruff, "--version"]), "file": os.path.relpath(args.file, REPO),
            "lines": len(args.file.read_text(encoding="utf-8").splitlines()), "rounds": args.runs,
            "cases": {case: {"command": " ".join(Path(cases[case]()[0]).name if i == 0 else part
                                                 for i, part in enumerate(cases[case]())).replace(str(scratch), "SCRATCH"),
                             **summary(samples[case])} for case in cases},
            "imports": imports,
            "targets_ms": TARGETS_MS,
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    section = markdown(report)
    if not args.no_markdown:
        write_section(args.out.parent.parent / "RESULTS.md", section)
    print(section)


if __name__ == "__main__":
    main()
