#!/usr/bin/env python3
"""Where a cold run's CPU time goes, by stage and by rule (bench/PROFILE.md), in one process:

    python bench/lint_stages.py /tmp/tritonlint-bench/corpus/full

Each stage is timed around its calls by wrapping it; the ast-grep parse is forced before a file's first rule
that has something to run, so the rules are timed without it."""

from __future__ import annotations

import functools
import sys
import time
from collections import Counter

import tritonlint.cli as cli
from tritonlint import engine, linter, source
from tritonlint.analysis import model

SECONDS: Counter = Counter()


def timed(name, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            SECONDS[name] += time.perf_counter() - start
    return wrapper


def run_by_rule(self, file, module_model, project, rules):
    if any(self._applies(rule, module_model) for rule in self.could_match(rules, file.text)):
        file.sg_root  # noqa: B018 - the parse, timed as its own stage
    found = []
    for rule in rules:
        start = time.perf_counter()
        found += original_run(self, file, module_model, project, [rule])
        SECONDS[f"rule {rule.id}"] += time.perf_counter() - start
    return found


original_run = engine.Engine.run
engine.Engine.run = run_by_rule
linter.check_syntax = timed("Python ast.parse", linter.check_syntax)
linter.syntax_problem = timed("Python syntax check without a tree (symtable)", linter.syntax_problem)
linter.ModuleModel = timed("kernel model", model.ModuleModel)
sg_root = functools.cached_property(timed("ast-grep parse", source.ParsedFile.sg_root.func))
sg_root.__set_name__(source.ParsedFile, "sg_root")
source.ParsedFile.sg_root = sg_root

start = time.perf_counter()
try:
    cli.main([sys.argv[1], "--target", "sm_90", "--output-format", "json", "--exit-zero", "-j", "1", "--no-cache",
              "--output-file", "/dev/null"])
except SystemExit:
    pass
SECONDS["total"] = time.perf_counter() - start
for name, seconds in sorted(SECONDS.items(), key=lambda item: -item[1]):
    print(f"{seconds:8.2f} s  {name}")
