#!/usr/bin/env python3
"""The long fuzz profile: at least 100,000 generated Triton-like modules (tests/fuzz/strategies.py) through
the whole pipeline in-process (decode, parse, kernel model, every rule, JSON/SARIF/GitHub reports, --fix
in memory, a second --fix), checking the properties of tests/fuzz/properties.py on each. Failures are
counted and kept (the input and the error), never stopped at, so the run always reports its totals.

The modules come from the same generators as the fast profile, but their choices are drawn from a seeded
random.Random (strategies.RandomDraw) instead of hypothesis's engine, whose bookkeeping cost twice the
linting per module and whose shrinking a counting run does not use. Module number N is
`module_of(RandomDraw(N))`: a failure is kept with its seed and replays exactly. Shards run in parallel
processes over interleaved seeds; the results file is rewritten after every batch, so a run cut short
still leaves its counts (marked "complete": false).

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

from tests.fuzz.properties import check_module  # noqa: E402
from tests.fuzz.strategies import RandomDraw, module_of  # noqa: E402

KEPT_FAILURES = 20  # inputs kept per batch


def run_batch(seeds: range) -> tuple[Counter, list[dict]]:
    tally: Counter = Counter()
    failures: list[dict] = []
    for number in seeds:
        data = module_of(RandomDraw(number))
        try:
            tally.update(check_module(data))
        except Exception as exc:  # noqa: BLE001 - a failure is counted and kept, the run goes on
            tally["failures"] += 1
            if len(failures) < KEPT_FAILURES:
                failures.append({"seed": number, "error": f"{type(exc).__name__}: {exc}"[:2000],
                                 "where": traceback.format_exc(limit=-3)[-2000:],
                                 "input": data.decode("utf-8", "backslashreplace")[:8000]})
    return tally, failures


def shard(index: int, shards: int, examples: int, batch: int, queue: multiprocessing.Queue) -> None:
    """Seeds index, index + shards, index + 2 * shards... below `examples`, in batches."""
    mine = range(index, examples, shards)
    for start in range(0, len(mine), batch):
        clock = time.monotonic()
        tally, failures = run_batch(mine[start:start + batch])
        queue.put((index, tally, failures, time.monotonic() - clock))
    queue.put((index, None, None, 0.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "fuzz_long.json")
    args = parser.parse_args()

    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    queue = context.Queue()
    processes = [context.Process(target=shard, args=(i, args.shards, args.examples, args.batch, queue)) for i in range(args.shards)]
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
        "seeds": f"0..{args.examples - 1} (module N is module_of(RandomDraw(N)))",
        "python": platform.python_version(),
        "failure_inputs": failures,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(path)


if __name__ == "__main__":
    main()
