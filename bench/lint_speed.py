#!/usr/bin/env python3
"""Lint speed, side by side: tritonlint (cold and warm), `ruff check --select ALL --no-cache`, and semgrep
running YAML approximations of the founding rules, on one corpus of real Triton code.

The corpus is built in a scratch folder, never in the repository: `pip download` fetches the wheels or
sdists of Triton-heavy PyPI packages (or `--from-src` points at packages already unpacked, one folder
each), and the chosen file set is copied out with its folder structure. File set `triton` (the default):
every .py file that mentions "triton", plus the `__init__.py` files of the packages they sit in (so module
names, and so cross-module launch resolution, are as in the real packages). File set `all`: every .py
file. Paths under folders that any of the three tools skips by default (build, dist, venv, hidden folders,
...) are left out, and the script checks that all three tools see the same number of files.

Runs alternate between the tools (so load from elsewhere on the machine hits all of them alike); the
summary gives medians, ratios, peak memory (resident set of the whole process tree, sampled every 10 ms)
and a scaling series on nested random subsets of 1/8, 1/4, 1/2 and all of the files (1x/2x/4x/8x).
tritonlint runs from this checkout with its bytecode compiled, as an installed package would be.

    python bench/lint_speed.py --from-src /work/corpus/src            # no download
    python bench/lint_speed.py --scratch /tmp/tl-bench --runs 5       # download the packages
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import threading
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ["liger-kernel", "flag-gems", "fla-core", "sglang", "vllm", "lightllm", "unsloth", "torchao", "xformers",
            "gemlite", "bitsandbytes", "triton-kernels"]
SKIPPED_FOLDERS = {"build", "dist", "site-packages", "node_modules", "venv", ".venv", "__pypackages__", "_build",
                   "buck-out", ".git", ".tox", ".nox", ".eggs", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                   ".ipynb_checkpoints", "__pycache__", ".hg", ".svn", ".bzr", ".direnv", ".pants.d", ".pyenv",
                   ".pytype", ".vscode", "_darcs", "eggs"}
SCALES = (1, 2, 4, 8)
TARGET = "sm_90"  # Hopper, so that every founding rule runs (TL003 asks for sm_90 or newer)
WARM_REPEATS = 3  # a warm run is short and so at the mercy of a shared machine's moment: sample it more


# ---- corpus --------------------------------------------------------------------------------------------
def download(packages: list[str], scratch: Path) -> Path:
    """pip download each package (no dependencies) and unpack it into scratch/src/<package>/."""
    downloads, source = scratch / "dl", scratch / "src"
    for package in packages:
        target = source / package.replace("-", "_")
        if target.is_dir():
            continue
        folder = downloads / package
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(folder), package],
                       check=True)
        for archive in folder.iterdir():
            target.mkdir(parents=True, exist_ok=True)
            if archive.suffix in (".whl", ".zip"):
                with zipfile.ZipFile(archive) as bundle:
                    bundle.extractall(target)
            elif archive.name.endswith((".tar.gz", ".tgz")):
                with tarfile.open(archive) as bundle:
                    bundle.extractall(target, filter="data")
    return source


def select_files(source: Path, file_set: str) -> list[Path]:
    chosen: set[Path] = set()
    for path in sorted(source.rglob("*.py")):
        relative = path.relative_to(source)
        if any(part in SKIPPED_FOLDERS or part.startswith(".") for part in relative.parts[:-1]):
            continue
        if file_set == "all":
            chosen.add(relative)
            continue
        try:
            if "triton" not in path.read_text(encoding="utf-8", errors="replace"):
                continue
        except OSError:
            continue
        chosen.add(relative)
        folder = relative.parent
        while folder != Path(".") and (source / folder / "__init__.py").is_file():
            chosen.add(folder / "__init__.py")  # the package structure the module names come from
            folder = folder.parent
    return sorted(chosen)


def materialize(source: Path, files: list[Path], target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    for relative in files:
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / relative, destination)
    (target / ".semgrepignore").write_text("# nothing ignored: every tool lints the same files\n")


def subsets(files: list[Path], seed: int = 0) -> dict[int, list[Path]]:
    """Nested random subsets: 1x is an eighth of the files, 8x all of them."""
    groups = sorted({f for f in files if f.name != "__init__.py"})
    random.Random(seed).shuffle(groups)
    inits = [f for f in files if f.name == "__init__.py"]
    result = {}
    for scale in SCALES:
        part = set(groups[: len(groups) * scale // 8])
        folders = {parent for f in part for parent in f.parents}
        result[scale] = sorted(part | {i for i in inits if i.parent in folders})
    return result


# ---- running -------------------------------------------------------------------------------------------
def _tree_rss_kb(root: int) -> int:
    total, stack, seen = 0, [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/status") as status:
                total += next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as children:
                    stack.extend(int(c) for c in children.read().split())
        except (OSError, ValueError):
            continue
    return total


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system, all processes of the tool) and peak resident MB of the
    process tree. The machine may be shared: CPU time shows the work done whatever the contention."""
    peak = [0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss_kb(process.pid))
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    done.set()
    sampler.join()
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command[:3])}... failed ({process.returncode}): {stderr.decode()[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu, peak[0] // 1024


class Tools:
    def __init__(self, args: argparse.Namespace, scratch: Path) -> None:
        self.python = args.python
        self.ruff = args.ruff
        self.semgrep = args.semgrep
        self.cache = scratch / "tritonlint-cache"
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env["PYTHONPATH"] = str(REPO)
        self.env["NO_COLOR"] = "1"
        self.jobs = str(os.cpu_count() or 1)

    def command(self, tool: str) -> list[str]:
        """Each tool runs in the corpus folder, on `.`."""
        if tool == "tritonlint-cold":
            return [self.python, "-m", "tritonlint", ".", "--target", TARGET, "--no-cache", "--exit-zero"]
        if tool == "tritonlint-warm":
            return [self.python, "-m", "tritonlint", ".", "--target", TARGET, "--cache-dir", str(self.cache), "--exit-zero"]
        if tool == "ruff-all":
            return [self.ruff, "check", "--select", "ALL", "--no-cache", "--isolated", "--exit-zero", "."]
        if tool == "semgrep":
            return [self.semgrep, "scan", "--config", str(REPO / "bench" / "semgrep-rules"), "--metrics", "off",
                    "--disable-version-check", "--quiet", "--json", "--max-target-bytes", "0", "--jobs", self.jobs,
                    "."]
        raise ValueError(tool)

    def run(self, tool: str, corpus: Path) -> tuple[float, float, int]:
        return timed(self.command(tool), corpus, self.env)

    def prime(self, corpus: Path) -> None:
        """Compile tritonlint's bytecode and fill the warm cache (not timed)."""
        shutil.rmtree(self.cache, ignore_errors=True)
        timed(self.command("tritonlint-warm"), corpus, self.env)

    def file_counts(self, corpus: Path) -> dict[str, int]:
        counts = {}
        probe = ("import sys; from pathlib import Path; from tritonlint.config import DEFAULT_EXCLUDE; "
                 "from tritonlint.discovery import discover; "
                 "print(len(discover([Path(sys.argv[1])], Path.cwd(), list(DEFAULT_EXCLUDE)).files))")
        counts["tritonlint"] = int(subprocess.run([self.python, "-c", probe, "."], cwd=corpus,
                                                  env=self.env, capture_output=True, text=True, check=True).stdout)
        listed = subprocess.run([self.ruff, "check", "--select", "ALL", "--isolated", "--show-files", "."],
                                capture_output=True, text=True, cwd=corpus)
        counts["ruff"] = sum(1 for line in listed.stdout.splitlines() if line.strip().endswith(".py"))
        if self.semgrep:
            scan = subprocess.run(self.command("semgrep"), capture_output=True, text=True, cwd=corpus, env=self.env)
            counts["semgrep"] = len(json.loads(scan.stdout)["paths"]["scanned"])
        return counts

    def versions(self) -> dict[str, str]:
        def output(command: list[str]) -> str:
            try:
                return subprocess.run(command, capture_output=True, text=True, env=self.env).stdout.strip()
            except OSError:
                return "not available"

        found = {
            "python": platform.python_version(),
            "tritonlint": output([self.python, "-m", "tritonlint", "--version"]),
            "tritonlint_commit": output(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"]),
            "tritonlint_rules": output([self.python, "-c", "from tritonlint.ruleset import load_rules; "
                                        "print(' '.join(r.id for r in load_rules()))"]),
            "ruff": output([self.ruff, "--version"]),
        }
        if self.semgrep:
            found["semgrep"] = output([self.semgrep, "--version"])
        return found


def measure(tools: Tools, corpus: Path, names: list[str], runs: dict[str, int]) -> dict[str, dict]:
    """Alternate the tools run by run; medians and peaks per tool."""
    samples: dict[str, list[tuple[float, float, int]]] = {name: [] for name in names}
    for round_index in range(max(runs.values())):
        for name in names:
            for _ in range(WARM_REPEATS if name == "tritonlint-warm" else 1):
                if round_index >= runs[name]:
                    break
                samples[name].append(tools.run(name, corpus))
                wall, cpu, peak = samples[name][-1]
                print(f"  {name:16s} run {round_index + 1}: {wall:.3f} s, cpu {cpu:.2f} s, {peak} MB", flush=True)
    return {name: {"median_s": round(statistics.median(w for w, _, _ in values), 3),
                   "median_cpu_s": round(statistics.median(c for _, c, _ in values), 3),
                   "runs_s": [round(w, 3) for w, _, _ in values],
                   "runs_cpu_s": [round(c, 3) for _, c, _ in values],
                   "peak_mb": max(m for _, _, m in values)} for name, values in samples.items()}


def project_index(tools: Tools, corpus: Path) -> dict[str, object]:
    """The project index's CPU seconds, from one `-j 1` run of bench/lint_stages.py (its "project index:"
    lines: the kernel summaries of every module, the modules read for their imported names, the second
    pass), next to that run's total."""
    run = subprocess.run([tools.python, str(REPO / "bench" / "lint_stages.py"), "."], cwd=corpus, env=tools.env,
                         capture_output=True, text=True, check=True)
    stages: dict[str, float] = {}
    for line in run.stdout.splitlines():
        seconds, _, name = line.strip().partition(" s  ")
        if name and seconds.replace(".", "", 1).isdigit():
            stages[name] = float(seconds)
    index = {name.removeprefix("project index: "): value for name, value in stages.items()
             if name.startswith("project index: ")}
    return {"parts_cpu_s": index, "run_total_cpu_s": stages.get("total")}


def machine() -> dict[str, object]:
    info: dict[str, object] = {"cores": os.cpu_count(), "platform": platform.platform()}
    try:
        cpu = Path("/proc/cpuinfo").read_text()
        info["cpu"] = next(line.split(":", 1)[1].strip() for line in cpu.splitlines() if line.startswith("model name"))
        memory = Path("/proc/meminfo").read_text().splitlines()[0].split()[1]
        info["ram_gb"] = round(int(memory) / 1024 / 1024, 1)
    except (OSError, StopIteration, IndexError, ValueError):
        pass
    return info


def linear_fit(points: list[tuple[int, float]]) -> dict[str, float]:
    xs, ys = [x for x, _ in points], [y for _, y in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x in xs)
    intercept = mean_y - slope * mean_x
    residual = sum((y - (intercept + slope * x)) ** 2 for x, y in points)
    total = sum((y - mean_y) ** 2 for y in ys)
    return {"seconds_per_1000_files": round(slope * 1000, 4), "intercept_s": round(intercept, 3),
            "r_squared": round(1 - residual / total, 4) if total else 1.0}


def markdown(report: dict) -> str:
    main = report["main"]
    lines = [
        "# Lint speed",
        "",
        f"Measured {report['date']} on {report['machine'].get('cpu', '?')} ({report['machine']['cores']} cores, "
        f"{report['machine'].get('ram_gb', '?')} GB RAM), Python {report['versions']['python']}; "
        f"{report['versions']['tritonlint']} (commit {report['versions']['tritonlint_commit']}, rules "
        f"{report['versions']['tritonlint_rules']}), {report['versions']['ruff']}, semgrep "
        f"{report['versions'].get('semgrep', 'not run')}. Load average before/after: {report['load_before']} / "
        f"{report['load_after']} (the machine is shared).",
        "",
        f"Corpus: {report['corpus']['description']}; {report['corpus']['files']} files, "
        f"{report['corpus']['megabytes']} MB (files each tool saw: {report['corpus']['counts']}). "
        "Medians of alternating runs; peak memory is the resident set of the whole process tree.",
        "",
        "| tool | median wall | vs ruff ALL | median CPU (user+sys) | vs ruff ALL | runs | peak memory |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    ruff, ruff_cpu = main["ruff-all"]["median_s"], main["ruff-all"]["median_cpu_s"]
    for name, row in main.items():
        lines.append(f"| {name} | {row['median_s']:.3f} s | {row['median_s'] / ruff:.2f}x | "
                     f"{row['median_cpu_s']:.2f} s | {row['median_cpu_s'] / ruff_cpu:.2f}x | {len(row['runs_s'])} | "
                     f"{row['peak_mb']} MB |")
    index = report.get("project_index")
    if index:
        parts = "; ".join(f"{name} {seconds:.2f} s" for name, seconds in index["parts_cpu_s"].items())
        lines += ["", f"Project index, CPU of one `-j 1` run of bench/lint_stages.py (total {index['run_total_cpu_s']:.2f} s): "
                      f"{parts}."]
    ratios = report["ratios"]
    lines += ["", "Ratios: " + ", ".join(f"{k} = {v}" for k, v in ratios.items()), "",
              "Scaling (cold, medians; nested random subsets):", "",
              "| files (of them `__init__.py`) | MB | tritonlint wall | tritonlint CPU | ruff ALL wall | ruff ALL CPU "
              "| tritonlint CPU ms per non-init file |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in report["scaling"]["rows"]:
        lines.append(f"| {row['files']} ({row['files'] - row['source_files']}), {row['scale']}x | {row['megabytes']} | "
                     f"{row['tritonlint-cold']:.3f} s | {row['tritonlint-cold_cpu']:.2f} s | {row['ruff-all']:.3f} s | "
                     f"{row['ruff-all_cpu']:.2f} s | {row['tritonlint-cold_cpu'] / row['source_files'] * 1000:.2f} |")
    per_file = [row["tritonlint-cold_cpu"] / row["source_files"] * 1000 for row in report["scaling"]["rows"]]
    lines.append("\nSmall subsets carry proportionally more `__init__.py` files (every package folder of a chosen "
                 "file), which are nearly free to lint; per non-init file the CPU cost goes from "
                 f"{per_file[0]:.2f} ms (1x) to {per_file[-1]:.2f} ms (8x).")
    for label, key in (("wall", "fit_tritonlint"), ("CPU", "fit_tritonlint_cpu"),
                       ("CPU over non-init files", "fit_tritonlint_cpu_per_source_file")):
        fit = report["scaling"][key]
        lines.append(f"\nLinear fit of tritonlint cold {label} time over file count: {fit['seconds_per_1000_files']} s "
                     f"per 1000 files + {fit['intercept_s']} s, R^2 = {fit['r_squared']}.")
    lines += ["", "Against the issue's targets (this run):", ""]
    semgrep = report["ratios"].get("semgrep / cold (wall)")
    fit = report["scaling"]["fit_tritonlint_cpu_per_source_file"]
    peak = max(main["tritonlint-cold"]["peak_mb"], main["tritonlint-warm"]["peak_mb"])
    for goal, value, met in (
            ("cold <= 1.2x ruff ALL (wall)", f"{report['ratios']['cold / ruff ALL (wall)']}x",
             report["ratios"]["cold / ruff ALL (wall)"] <= 1.2),
            ("warm re-run <= 0.3 s", f"{main['tritonlint-warm']['median_s']} s", main["tritonlint-warm"]["median_s"] <= 0.3),
            (">= 20x faster than semgrep", f"{semgrep}x" if semgrep else "not run", bool(semgrep and semgrep >= 20)),
            ("time linear in the number of files (CPU over non-init files)", f"R^2 = {fit['r_squared']}",
             fit["r_squared"] >= 0.99),
            ("peak memory <= 300 MB (process tree)", f"{peak} MB", peak <= 300)):
        lines.append(f"- {goal}: {value}, {'met' if met else 'NOT met'}")
    lines += ["", "The semgrep rules (bench/semgrep-rules) are pattern approximations of the founding rules: no "
              "constant folding, autotune configs or cross-module resolution. Wall times on this shared machine "
              "move with the load of other work; CPU times are the steadier comparison.", ""]
    return "\n".join(lines)


BEGIN, END = "<!-- lint-speed:begin -->", "<!-- lint-speed:end -->"


def write_section(path: Path, section: str) -> None:
    """This bench's part of RESULTS.md, between its markers; the other benches' sections stay."""
    section = f"{BEGIN}\n{section.strip()}\n{END}"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + section + text[text.index(END) + len(END):]
    else:
        text = section + "\n\n" + text.lstrip("\n")
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from-src", type=Path, help="packages already unpacked, one folder each (skip pip download)")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/tritonlint-bench"))
    parser.add_argument("--packages", nargs="*", default=PACKAGES)
    parser.add_argument("--file-set", choices=("triton", "all"), default="triton")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--semgrep-runs", type=int, default=3)
    parser.add_argument("--scaling-runs", type=int, default=3)
    parser.add_argument("--python", default=sys.executable, help="the Python that runs tritonlint")
    parser.add_argument("--ruff", default=shutil.which("ruff") or "ruff")
    parser.add_argument("--semgrep", default="/work/semgrep-venv/bin/semgrep", help="'' to leave semgrep out")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "lint_speed.json")
    parser.add_argument("--markdown-only", action="store_true", help="rewrite RESULTS.md from --out; run nothing")
    args = parser.parse_args()
    if args.markdown_only:
        write_section(args.out.parent.parent / "RESULTS.md", markdown(json.loads(args.out.read_text())))
        return
    if args.semgrep and not Path(args.semgrep).exists():
        args.semgrep = shutil.which("semgrep") or ""

    scratch = args.scratch.resolve()
    source = args.from_src.resolve() if args.from_src else download(args.packages, scratch)
    files = select_files(source, args.file_set)
    corpus = scratch / "corpus" / "full"
    materialize(source, files, corpus)
    tools = Tools(args, scratch)
    size = sum((corpus / f).stat().st_size for f in files)
    counts = tools.file_counts(corpus)
    print(f"corpus: {len(files)} files, {size / 1e6:.1f} MB; files seen: {counts}", flush=True)

    load_before = os.getloadavg()
    tools.prime(corpus)
    names = ["tritonlint-cold", "tritonlint-warm", "ruff-all"] + (["semgrep"] if args.semgrep else [])
    runs = {name: args.runs for name in names}
    if args.semgrep:
        runs["semgrep"] = args.semgrep_runs
    main_rows = measure(tools, corpus, names, runs)
    index = project_index(tools, corpus)
    print(f"project index (CPU s of a -j 1 run of {index['run_total_cpu_s']} s): {index['parts_cpu_s']}", flush=True)

    rows = []
    for scale, part in subsets(files).items():
        folder = scratch / "corpus" / f"scale-{scale}x"
        materialize(source, part, folder)
        print(f"scaling {scale}x: {len(part)} files", flush=True)
        result = measure(tools, folder, ["tritonlint-cold", "ruff-all"],
                         {"tritonlint-cold": args.scaling_runs, "ruff-all": args.scaling_runs})
        rows.append({"scale": scale, "files": len(part),
                     "source_files": sum(1 for f in part if f.name != "__init__.py"),
                     "megabytes": round(sum((folder / f).stat().st_size for f in part) / 1e6, 1),
                     **{k: v["median_s"] for k, v in result.items()},
                     **{f"{k}_cpu": v["median_cpu_s"] for k, v in result.items()},
                     "tritonlint_peak_mb": result["tritonlint-cold"]["peak_mb"]})
    load_after = os.getloadavg()

    ruff = main_rows["ruff-all"]["median_s"]
    cold = main_rows["tritonlint-cold"]
    ratios = {"cold / ruff ALL (wall)": round(cold["median_s"] / ruff, 3),
              "cold / ruff ALL (CPU)": round(cold["median_cpu_s"] / main_rows["ruff-all"]["median_cpu_s"], 3),
              "warm (s)": main_rows["tritonlint-warm"]["median_s"]}
    if args.semgrep:
        ratios["semgrep / cold (wall)"] = round(main_rows["semgrep"]["median_s"] / cold["median_s"], 1)
        ratios["semgrep / cold (CPU)"] = round(main_rows["semgrep"]["median_cpu_s"] / cold["median_cpu_s"], 1)
    report = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": machine(),
        "versions": tools.versions(),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "corpus": {
            "description": (f"file set `{args.file_set}` of {', '.join(sorted(p.name for p in source.iterdir()))}"
                            + (" (every .py file that mentions triton, plus its packages' __init__.py)"
                               if args.file_set == "triton" else " (every .py file)")),
            "files": len(files), "megabytes": round(size / 1e6, 1), "counts": counts,
        },
        "commands": {name: " ".join(tools.command(name)).replace(str(REPO), "REPO").replace(str(scratch), "SCRATCH")
                     for name in names},
        "main": main_rows,
        "project_index": index,
        "ratios": ratios,
        "scaling": {"rows": rows,
                    "fit_tritonlint": linear_fit([(r["files"], r["tritonlint-cold"]) for r in rows]),
                    "fit_tritonlint_cpu": linear_fit([(r["files"], r["tritonlint-cold_cpu"]) for r in rows]),
                    "fit_tritonlint_cpu_per_source_file": linear_fit(
                        [(r["source_files"], r["tritonlint-cold_cpu"]) for r in rows]),
                    "fit_ruff": linear_fit([(r["files"], r["ruff-all"]) for r in rows])},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    write_section(args.out.parent.parent / "RESULTS.md", markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
