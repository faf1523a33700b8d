#!/usr/bin/env python3
"""Where a cold run's CPU time goes, by stage and by rule (bench/PROFILE.md), in one process:

    python bench/lint_stages.py /tmp/tritonlint-bench/corpus/full [FINDINGS.json]

Each stage is timed (CPU time of the process) around its calls by wrapping it; the ast-grep parse is forced
before a file's first rule that has something to run, so the rules are timed without it. The project index (the kernel summaries of
every module, which launches in other modules resolve to, and the modules read for what others import from
them) is shown on its own lines: its parts run inside the stages above them, so they are not added to them."""

from __future__ import annotations

import functools
import sys
import time
from collections import Counter

import tritonlint.cli as cli
from tritonlint import engine, linter, runner, source
from tritonlint.analysis import model, project

SECONDS: Counter = Counter()
COUNTS: Counter = Counter()
INDEX = "project index: "


def timed(name, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            SECONDS[name] += time.process_time() - start
    return wrapper


def run_by_rule(self, file, module_model, project, rules):
    if any(self._applies(rule, module_model) for rule in self.could_match(rules, file.text)):
        file.sg_root  # noqa: B018 - the parse, timed as its own stage
    found = []
    for rule in rules:
        start = time.process_time()
        found += original_run(self, file, module_model, project, [rule])
        SECONDS[f"rule {rule.id}"] += time.process_time() - start
    return found


def map_by_pass(linter_, project_, tasks, jobs, session):
    name = f"{INDEX}second pass, files re-linted with every module's summaries" if project_.summaries is not None \
        else "first pass (every file)"
    COUNTS[name] += len(tasks)
    return timed(name, original_map)(linter_, project_, tasks, jobs, session)


original_run = engine.Engine.run
original_map = runner._map
runner._map = map_by_pass
engine.Engine.run = run_by_rule
linter.check_syntax = timed("Python ast.parse", linter.check_syntax)
linter.syntax_problem = timed("Python syntax check without a tree (symtable)", linter.syntax_problem)
linter.ModuleModel = timed("kernel model", model.ModuleModel)
model.ModuleModel.summaries = timed(f"{INDEX}kernel summaries of every module (in the first pass)",
                                    model.ModuleModel.summaries)
project._module_model = timed(f"{INDEX}modules read for their imported names (in the model and rules)",
                              project._module_model)
sg_root = functools.cached_property(timed("ast-grep parse", source.ParsedFile.sg_root.func))
sg_root.__set_name__(source.ParsedFile, "sg_root")
source.ParsedFile.sg_root = sg_root

start = time.process_time()
try:
    cli.main([sys.argv[1], "--target", "sm_90", "--output-format", "json", "--exit-zero", "-j", "1", "--no-cache",
              "--output-file", sys.argv[2] if len(sys.argv) > 2 else "/dev/null"])
except SystemExit:
    pass
SECONDS["total"] = time.process_time() - start
for name, seconds in sorted(SECONDS.items(), key=lambda item: (item[0].startswith(INDEX), -item[1])):
    print(f"{seconds:8.2f} s  {name}" + (f" ({COUNTS[name]} files)" if name in COUNTS else ""))
