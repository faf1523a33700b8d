"""The measured GPU evidence: fixture results committed as data, quoted by rule docs and messages.

Numbers in messages and docs come from this file and nowhere else.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any


def results_path() -> Path:
    packaged = Path(__file__).with_name("_evidence") / "h200.json"
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parent.parent / "fixtures" / "results" / "h200.json"


_provided: dict[str, Any] | None = None  # the results as the compiled rule set keeps them


def provide(data: dict[str, Any] | None) -> None:
    """The results read from the compiled rule set in the cache (ruleset.load_rules): `load` need not read the
    file (its name, size and times are part of the rule set's key, through cache.tool_digest)."""
    global _provided
    _provided = data


@lru_cache(maxsize=1)
def load() -> dict[str, Any] | None:
    if _provided is not None:
        return _provided
    import json  # here: the cache names this file on every run, few runs read it

    try:
        data = json.loads(results_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("results"), list) else None


def results_for(rule_id: str) -> list[dict[str, Any]]:
    data = load()
    if data is None:
        return []
    return [r for r in data["results"] if isinstance(r, dict) and r.get("rule") == rule_id]


def _device(data: dict[str, Any], row: dict[str, Any] | None = None) -> str:
    """The card a row was measured on: its own where a failure fixture was run on another GPU (fixtures.merge
    --other-device), else the table's."""
    return str((row or {}).get("device") or data.get("device", "GPU")).removeprefix("NVIDIA ")


def device_of(row: dict[str, Any]) -> str:
    """The card a committed result row was measured on."""
    return _device(load() or {}, row)


def measured_phrase(rule_id: str, expectation: str | None = None) -> str:
    """One clause for a message, from the rule's flagged fixtures: the largest measured slowdown
    (expectation "slower"), how the slow side fails ("fails"), or the measured ratio where no gap is
    expected ("same"). Without `expectation`, the first of those that has data."""
    data = load()
    if data is None:
        return "not measured on a GPU yet"
    rows = [r for r in results_for(rule_id) if r.get("flagged", True)]
    for kind in [expectation] if expectation else ["slower", "fails", "same"]:
        chosen = [r for r in rows if r.get("expectation") == kind]
        if kind == "fails":
            failing = [r for r in chosen if r.get("slow_failure") or r.get("slow_rel_err")]
            if failing:
                row = failing[0]
                how = row.get("slow_failure") or f"relative error {row['slow_rel_err']:.3g}"
                return f"the slow fixture fails on {_device(data, row)}: {how}"
            continue
        timed = [r for r in chosen if isinstance(r.get("speedup"), (int, float))]
        if not timed:
            continue
        row = max(timed, key=lambda r: r["speedup"])
        device = _device(data, row)
        if kind == "slower":
            return f"measured {row['speedup']:.2f}x slower on {device} in fixture {row['fixture']}"
        phrase = f"fixture {row['fixture']} on {device}: run time {row['speedup']:.2f}x that of the fixed kernel"
        if isinstance(row.get("slow_compile_s"), (int, float)) and isinstance(row.get("fast_compile_s"), (int, float)):
            phrase += f", first call (compile) {row['slow_compile_s']:.1f} s vs {row['fast_compile_s']:.1f} s"
        return phrase
    return "not measured on a GPU yet"


def fixture_phrase(fixture: str) -> str:
    """One clause for a message, from one fixture: the variant the finding is about, not another's number."""
    data = load()
    row = next((r for r in (data or {}).get("results", []) if r.get("fixture") == fixture), None)
    if data is None or row is None:
        return "not measured on a GPU yet"
    device = _device(data, row)
    if row.get("slow_failure"):
        return f"the slow fixture fails on {device}: {row['slow_failure']}"
    if not isinstance(row.get("speedup"), (int, float)):
        return "not measured on a GPU yet"
    if row.get("expectation") == "slower" and row["speedup"] >= 1.2:
        return f"measured {row['speedup']:.2f}x slower on {device} in fixture {fixture}"
    phrase = f"fixture {fixture} on {device}: run time {row['speedup']:.2f}x that of the fixed kernel"
    if isinstance(row.get("slow_compile_s"), (int, float)) and isinstance(row.get("fast_compile_s"), (int, float)):
        phrase += f", first call (compile) {row['slow_compile_s']:.1f} s vs {row['fast_compile_s']:.1f} s"
    return phrase


def evidence_section(rule_id: str) -> str:
    """The Evidence lines of `tritonlint rule ID`: every fixture of the rule, with device and versions, and
    the rule's CPU runs under several Triton versions where it has them."""
    versions = version_section(rule_id)
    gpu = _gpu_section(rule_id)
    return f"{gpu}\n\n{versions}" if versions else gpu


def _gpu_section(rule_id: str) -> str:
    data = load()
    rows = results_for(rule_id)
    if data is None or not rows:
        return "No GPU measurement is recorded for this rule's fixtures yet."
    header = (f"Measured on {data.get('device')} (torch {data.get('torch')}, triton {data.get('triton')}, "
              f"{data.get('date')}), medians of triton.testing.do_bench:")
    lines = [header]
    for row in rows:
        shape = ", ".join(f"{k}={v}" for k, v in (row.get("shape") or {}).items())
        if row.get("slow_failure"):
            outcome = f"slow side fails: {row['slow_failure']}"
        elif isinstance(row.get("speedup"), (int, float)):
            outcome = f"slow {row['slow_ms']:.3f} ms, fast {row['fast_ms']:.3f} ms: {row['speedup']:.2f}x"
        else:
            outcome = "no timing recorded"
        compile_note = ""
        if isinstance(row.get("slow_compile_s"), (int, float)) and isinstance(row.get("fast_compile_s"), (int, float)):
            compile_note = f"; first call (compile) {row['slow_compile_s']:.1f} s vs {row['fast_compile_s']:.1f} s"
        elsewhere = ""
        if row.get("device") and row["device"] != data.get("device"):
            elsewhere = f" (on {row['device']}, torch {row.get('torch')}, triton {row.get('triton')}, {row.get('date')})"
        lines.append(f"- {row.get('fixture')} ({shape}, {row.get('dtype')}): {outcome}{compile_note}{elsewhere}")
    return "\n".join(lines)


# ---- CPU runs of an API under several Triton versions (bench/triton_versions.py) ------------------------
def _versions_path(rule_id: str) -> Path:
    return results_path().with_name(f"{rule_id.lower()}-versions.json")


@lru_cache(maxsize=4)
def load_versions(rule_id: str) -> dict[str, Any] | None:
    import json

    try:
        data = json.loads(_versions_path(rule_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("versions"), dict) else None


def version_outcome(rule_id: str, probe: str, version: str) -> str | None:
    """What a probe did under a Triton version (`3.9` or `3.9.0`): the exception, the warning, or "ran"."""
    data = load_versions(rule_id)
    if data is None:
        return None
    for name, results in data["versions"].items():
        if name == version or name.startswith(version + "."):
            entry = results.get(probe) if isinstance(results, dict) else None
            if not isinstance(entry, dict):
                return None
            if entry.get("outcome") == "error":
                return entry.get("cause") or entry.get("exception")
            triton_warnings = [w for w in entry.get("warnings", []) if "NumPy" not in w]
            return triton_warnings[0] if triton_warnings else "ok, no warning"
    return None


def version_section(rule_id: str, probes: list[str] | None = None) -> str:
    """Evidence lines: each probe's (default: every probe's) outcome per Triton version, from the committed
    CPU runs."""
    data = load_versions(rule_id)
    if data is None:
        return ""
    if probes is None:
        probes = list(dict.fromkeys(name for results in data["versions"].values() if isinstance(results, dict)
                                    for name, entry in results.items() if isinstance(entry, dict) and "outcome" in entry))
    lines = [f"CPU runs under each Triton version ({data.get('script')}, torch {data.get('torch')}, {data.get('date')}):"]
    for probe in probes:
        outcomes: list[tuple[str, str]] = []
        for version in data["versions"]:
            outcome = version_outcome(rule_id, probe, version)
            if outcome is None:
                continue
            if outcomes and outcomes[-1][1] == outcome:
                outcomes[-1] = (outcomes[-1][0].split("-")[0] + "-" + version, outcome)
            else:
                outcomes.append((version, outcome))
        if outcomes:
            lines.append(f"- {probe}: " + "; ".join(f"{v}: {o}" for v, o in outcomes))
    return "\n".join(lines) if len(lines) > 1 else ""
