#!/usr/bin/env python3
"""The long fuzz profile: at least 100,000 generated Triton-like modules (tests/fuzz/strategies.py) through
the whole pipeline in-process (decode, parse, kernel model, every rule, JSON/SARIF/GitHub reports, --fix
in memory, a second --fix), checking the properties of tests/fuzz/properties.py on each. Failures are
counted and kept (the input and the error), never stopped at, so the run always reports its totals.

Shards run in parallel processes, each in batches of hypothesis examples under its own seed; the results
file is rewritten after every batch, so a run cut short still leaves its counts (marked "complete": false).

    nice python bench/fuzz_long.py                        # 100,000 modules, 2 shards
    python bench/fuzz_long.py --examples 2000 --shards 1  # a quick look
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import platform
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from tests.fuzz.properties import check_module  # noqa: E402
from tests.fuzz.strategies import module_bytes  # noqa: E402

KEPT_FAILURES = 20  # inputs kept per shard


def run_batch(examples: int, batch_seed: int) -> tuple[Counter, list[dict]]:
    tally: Counter = Counter()
    failures: list[dict] = []

    @seed(batch_seed)
    @settings(max_examples=examples, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(module_bytes())
    def property_holds(data: bytes) -> None:
        try:
            tally.update(check_module(data))
        except Exception as exc:  # noqa: BLE001 - a failure is counted and kept, the run goes on
            tally["failures"] += 1
            if len(failures) < KEPT_FAILURES:
                failures.append({"error": f"{type(exc).__name__}: {exc}"[:2000],
                                 "where": traceback.format_exc(limit=-3)[-2000:],
                                 "input": data.decode("utf-8", "backslashreplace")[:8000]})

    property_holds()
    return tally, failures


def shard(index: int, examples: int, batch: int, queue: multiprocessing.Queue) -> None:
    done = 0
    number = 0
    while done < examples:
        size = min(batch, examples - done)
        start = time.monotonic()
        tally, failures = run_batch(size, 1_000_003 * index + number)
        queue.put((index, tally, failures, time.monotonic() - start))
        done += tally["modules"] + tally["undecodable"] + tally["failures"]
        number += 1
    queue.put((index, None, None, 0.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--batch", type=int, default=2_000)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "fuzz_long.json")
    args = parser.parse_args()

    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    queue = context.Queue()
    per_shard = -(-args.examples // args.shards)
    processes = [context.Process(target=shard, args=(i, per_shard, args.batch, queue)) for i in range(args.shards)]
    for process in processes:
        process.start()
    started = datetime.datetime.now(datetime.timezone.utc)
    clock = time.monotonic()
    totals: Counter = Counter()
    failures: list[dict] = []
    running = args.shards
    while running:
        index, tally, found, _ = queue.get()
        if tally is None:
            running -= 1
            continue
        totals.update(tally)
        failures.extend(found)
        write(args.out, started, time.monotonic() - clock, totals, failures, args, complete=False)
        print(f"{totals['modules'] + totals['undecodable'] + totals['failures']:>7} modules, "
              f"{totals['failures']} failures, {time.monotonic() - clock:.0f} s", flush=True)
    for process in processes:
        process.join()
    write(args.out, started, time.monotonic() - clock, totals, failures, args, complete=True)


def write(path: Path, started: datetime.datetime, seconds: float, totals: Counter, failures: list[dict],
          args: argparse.Namespace, complete: bool) -> None:
    codes = {code: totals[code] for code in sorted(totals) if code.startswith("TL")}
    report = {
        "date": started.strftime("%Y-%m-%d %H:%M UTC"),
        "complete": complete,
        "target_examples": args.examples,
        "modules": totals["modules"] + totals["undecodable"] + totals["failures"],
        "linted": totals["modules"],
        "undecodable": totals["undecodable"],
        "failures": totals["failures"],
        "findings": totals["findings"],
        "findings_by_code": codes,
        "fixed_modules": totals["fixed_files"],
        "fixes_applied": totals["fixes"],
        "seconds": round(seconds, 1),
        "shards": args.shards,
        "python": platform.python_version(),
        "failure_inputs": failures,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(path)


if __name__ == "__main__":
    main()
