"""TL006: `@triton.autotune(key=[...])` that leaves out an argument which changes the best config.

Triton's autotuner (triton/runtime/autotuner.py, `Autotuner.run`) caches the chosen config under the values
of the `key` arguments plus the dtype of every tensor argument, and nothing else. A kernel argument that
sets a loop trip count, the tiled extent of the problem or a mask along a tuned block, or a constexpr flag
that selects a code path, reuses a config benchmarked for other values when it is not in the key.
"""

from __future__ import annotations

import ast
import builtins
import copy
import io
import re
import tokenize
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tritonlint import evidence
from tritonlint.analysis.call_edits import append_to_list
from tritonlint.analysis.configs import written_meta
from tritonlint.analysis.flow import flow_of
from tritonlint.analysis.host import HostScope, autograd_forward, project_call_bindings
from tritonlint.analysis.kernel import not_specialized
from tritonlint.analysis.launches import bind_launch, choice_candidates, launches_starting
from tritonlint.analysis.model import (
    Autotune,
    JitFunction,
    LaunchSite,
    ModuleModel,
    Param,
)
from tritonlint.analysis.names import DTYPE_WORDS, is_block_name, last_name, name_words
from tritonlint.analysis.project import Project, jit_function_in
from tritonlint.analysis.triton_names import DESCRIPTOR_METHODS, MEMORY_CALLS, TL
from tritonlint.context import (
    Exemption,
    MatchContext,
    ParamSpec,
    RawEdits,
    Verdict,
    condition,
    fixer,
)
from tritonlint.walk import children, parents, walk

DOT = f"{TL}.dot"
LOOPS = (ast.For, ast.AsyncFor, ast.While)
LOOP_CALLS = frozenset({"range", f"{TL}.range", f"{TL}.static_range"})
CDIV = frozenset({"triton.cdiv", f"{TL}.cdiv"})
PROGRAM_INDEX = frozenset({f"{TL}.program_id", f"{TL}.num_programs"})
ARANGE = f"{TL}.arange"
BLOCK_POINTERS = frozenset(f"{TL}.{n}" for n in ("make_block_ptr", "make_tensor_descriptor", "advance"))
# What an epilogue may do and stay one: plain loads and stores of a tile, by pointers or through a block pointer
# (the same traffic); not a TMA descriptor, an atomic or tl.dot.
EPILOGUE_CALLS = frozenset(f"{TL}.{n}" for n in ("load", "store", "make_block_ptr", "advance"))
TILE_MAKERS = BLOCK_POINTERS | {ARANGE, f"{TL}.zeros", f"{TL}.full", f"{TL}.broadcast_to"}
# Reductions: over a whole tile (no axis) they give one scalar (`sq += tl.sum(x * x)`).
REDUCTIONS = frozenset(f"{TL}.{n}" for n in ("sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"))
TRANSCENDENTAL = frozenset({"exp", "exp2", "log", "log2", "tanh", "sigmoid", "sqrt", "rsqrt", "sqrt_rn", "erf", "sin",
                            "cos", "pow", "fdiv", "div_rn", "softmax", "log1p", "expm1",
                            # Philox random numbers (dropout): ten rounds of integer multiplies per element
                            "rand", "randn", "randint", "randint4x", "rand4x", "randn4x", "philox"})
# Meta-parameters that configs usually set, presumed tuned when the configs cannot be read.
TUNING_KNOBS = frozenset({"split_k", "group_size_m", "group_m", "group_size", "num_stages", "num_warps", "num_ctas",
                          "a_load_order", "waves_per_eu", "matrix_instr_nonkdim", "kpack", "warp_specialize"})
# Words that mark a key argument as a bucket of a size (bucket_M, M_CLOSEST, CACHE_KEY_SEQLEN, T_BUCKET).
BUCKET_WORDS = frozenset({"bucket", "buckets", "bucketed", "closest", "rounded", "pow2", "cache", "bin", "binned"})
# Words that name a property of the device (NUM_SMS, sm_count, num_cores): the same on every call of a process.
TOPOLOGY_WORDS = frozenset({"rank", "ranks", "nranks", "world", "nnodes"})  # rank, num_ranks, WORLD_SIZE, nnodes
DEVICE_WORDS = frozenset({"sms", "sm", "cores", "core", "multiprocessors", "cus"})
# Math helpers imported from utility modules (`from .op import exp2, log`, `softplus`, `fast_exp`): elementwise
# math like tl.exp, which changes the work only inside a loop.
MATH_HELPER_WORDS = TRANSCENDENTAL | {"softplus", "expf", "exp2f", "logf", "log2f"}
NO_WORK, MATH_WORK, STRUCTURAL_WORK = 0, 1, 2
KINDS = ("loop", "extent", "mask", "mode")  # most telling first
_DTYPE_TEXT = re.compile(r"dtype|is_floating_point|element_size|itemsize", re.IGNORECASE)
_KEY_WORD = re.compile(r"\bkeys?\b|\bkey=", re.IGNORECASE)
_EXPLAINS = re.compile(r"\b(omit|left out|leave out|leaves out|not in|exclud|intentional|on purpose|bucket|avoid|"
                       r"don'?t|do not|only|instead|because|since|fixed|constant|same config|across shapes|once per|"
                       r"changes? every|var(y|ies) (per|every))", re.IGNORECASE)


@dataclass(frozen=True)
class Reason:
    """Why a parameter belongs in the autotune key: how the kernel uses it."""
    kind: str  # one of KINDS
    line: int
    text: str  # the source it was seen in

    def describe(self, name: str) -> str:
        what = {
            "loop": "sets the trip count of",
            "extent": "sets the tiled extent",
            "mask": "bounds the mask along a tuned block",
            "mode": "selects a code path in",
        }[self.kind]
        return f"{name} {what} `{self.text}` at line {self.line}"


class KernelUses:
    """What each parameter of a jit function drives: loop trip counts, tiled extents, masks along a tuned
    block, and (constexprs) code paths. Values loaded from memory drive nothing, and a parameter that only
    splits or scales a program index (`pid // H`, `pid_m * BLOCK_M`) locates a tile rather than sizing work."""

    def __init__(self, model: ModuleModel, function: JitFunction, tuned: set[str], depth: int = 2,
                 called_in_loop: bool = False, scan: bool = True, positions: frozenset[str] = frozenset()) -> None:
        self.model = model
        self.depth = depth
        self.function = function
        self.tuned = tuned
        self.called_in_loop = called_in_loop  # a helper called inside a loop: all of its body runs there
        self.params = {p.name for p in function.params}
        self.constexprs = set(function.constexprs)
        self.derived: dict[str, set[str]] = {}  # local name -> the parameters its value depends on
        self.position: set[str] = set(positions)  # locals derived from a program index (and such arguments)
        self.along_block: set[str] = set()  # locals built from tl.arange over a tuned block
        self.loaded: set[str] = set()  # locals whose value is read from memory (data)
        self.reasons: dict[str, Reason] = {}
        self.kinds: dict[str, set[str]] = {}  # every kind of use seen for each parameter, not only the most telling
        self._loops: set[int] | None = None
        self._guards: dict[int, set[str]] | None = None
        self._tile_names: set[str] | None = None
        self._masks: set[int] | None = None
        self._tensors: set[str] | None = None
        self.optional_guards: dict[str, set[str]] = {}  # flag -> the tensor arguments it alone guards
        self.truth_guards: set[str] = set()  # those of them tested for truth alone (`if HAS_X:`), never compared
        self._values: dict[str, list[ast.expr]] | None = None
        self._parents: dict[int, ast.AST] | None = None
        self._loop_indices: set[str] | None = None
        self._param_uses: list[ast.Name] | None = None
        self._main_loop: bool | None = None
        # Expressions are asked about again and again (each pass of a fixpoint, each use of a local): what
        # one walk of each finds is kept, by node.
        self._walked: dict[int, tuple[frozenset[str], list[ast.Call]]] = {}
        self._reached: dict[int, tuple[set[str], set[str]]] = {}
        self._along: dict[int, bool] = {}  # _along_block by node; cleared while along_block still grows
        if function.node is not None:
            self._derive(function.node)
            if scan:  # without it, only what values depend on (a helper's returned values)
                self._scan(function.node, depth)

    # ---- dependencies ---------------------------------------------------------------------------------
    def _derive(self, root: ast.AST) -> None:
        pairs = [pair for n in walk(root) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                 for pair in _assigned_pairs(n) if pair[0] not in self.params]
        # Program-index positions first: what depends on a parameter is judged knowing them.
        for test, names in ((self._is_position, self.position), (self._along_block, self.along_block),
                            (self._reads_memory, self.loaded)):
            changed = True
            while changed:
                changed = False
                for name, value in pairs:
                    if name not in names and test(value):
                        names.add(name)
                        changed = True
                        self._along.clear()  # what was not along a block may be now
        reached = [(name, self._reach(value)) for name, value in pairs]
        changed = True
        while changed:
            changed = False
            for name, (params, locals_) in reached:
                depends = params.union(*(self.derived.get(local, ()) for local in locals_))
                if not depends <= self.derived.get(name, set()):
                    self.derived[name] = self.derived.get(name, set()) | depends
                    changed = True

    def _walk(self, expr: ast.AST) -> tuple[frozenset[str], list[ast.Call]]:
        """The names an expression reads and the calls it makes."""
        found = self._walked.get(id(expr))
        if found is None:
            nodes = walk(expr)
            found = self._walked[id(expr)] = (frozenset(n.id for n in nodes if isinstance(n, ast.Name)),
                                               [n for n in nodes if isinstance(n, ast.Call)])
        return found

    def _reads_memory(self, expr: ast.AST) -> bool:
        """The expression holds data read from memory (`y = tl.load(Y + row)`, also through locals)."""
        names, calls = self._walk(expr)
        return not names.isdisjoint(self.loaded) or any(
            (self.model.qualify(call.func) or "") in MEMORY_CALLS for call in calls)

    def _selector_params(self, test: ast.expr) -> set[str]:
        """The parameters a branch test selects on. A value compared with data read from memory (`if y ==
        IGNORE_INDEX:` with y a loaded label) only names a sentinel: the data picks the branch at run time, and
        every value of the sentinel compiles the same two paths. What the data side itself is computed from
        still selects (`tl.max(ids <= SQ - 1) > 0`)."""
        if isinstance(test, ast.BoolOp):
            return set().union(*(self._selector_params(value) for value in test.values))
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._selector_params(test.operand)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            sides = [side for side in (test.left, test.comparators[0]) if self._reads_memory(side)]
            if len(sides) == 1:
                return self.params_of(sides[0])
        return self.params_of(test)

    def _is_position(self, expr: ast.AST) -> bool:
        names, calls = self._walk(expr)
        return not names.isdisjoint(self.position) or any(
            _is_program_index(self.model.qualify(call.func) or "") for call in calls)

    def params_of(self, expr: ast.AST) -> set[str]:
        """Parameters an expression depends on, through local variables. A parameter the kernel rebinds on
        every path before this use (`NT = tl.cdiv(T, BT)` in both arms of an `if`) stands for what it was
        rebound to."""
        params, locals_ = self._reach(expr)
        return params.union(*(self.derived.get(local, ()) for local in locals_))

    def _reach(self, expr: ast.AST) -> tuple[set[str], set[str]]:
        """The parameters and the local names whose values an expression depends on (see params_of); what
        the locals depend on is looked up as `derived` grows."""
        cached = self._reached.get(id(expr))
        if cached is not None:
            return cached
        params: set[str] = set()
        locals_: set[str] = set()
        stack, seen = [expr], set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, ast.Name) and node.id in self.params:
                rebound = self._rebound(node)
                if rebound is not None:
                    stack.extend(rebound)
                    continue
            if isinstance(node, ast.Call):
                name = self.model.qualify(node.func) or ""
                if name in MEMORY_CALLS or _is_program_index(name):
                    continue  # loaded data; the grid's shape
                placed = [a for a in [*node.args, *(k.value for k in node.keywords)] if self._is_position(a)]
                helper = name == f"{TL}.swizzle2d" or not name.startswith("triton.") \
                    and not (isinstance(node.func, ast.Name) and hasattr(builtins, node.func.id))
                returned = self._returned_arguments(node) if helper else None
                if returned is not None:
                    stack.extend(returned)  # what a jit helper returns: loaded values in it are data too
                    continue
                if placed and helper:
                    stack.extend(placed)  # swizzle(pid, num_pid_m, GROUP_M): the others only place the tile
                    continue
            if isinstance(node, ast.Attribute) and node.attr in ("dtype", "element_ty", "shape"):
                continue
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod)) and self._is_position(node.left):
                stack.append(node.left)  # `pid // H`: H splits a program index
                continue
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                scaled = [side for side in (node.left, node.right) if self._is_position(side)]
                if scaled:
                    stack.extend(scaled)  # `pid_m * BLOCK_M`: the block places the tile
                    continue
            if isinstance(node, ast.Name):
                (params if node.id in self.params else locals_).add(node.id)
            stack.extend(children(node))
        self._reached[id(expr)] = params, locals_
        return params, locals_

    def _returned_arguments(self, call: ast.Call) -> list[ast.expr] | None:
        """The arguments of a call to a jit helper (of this module or imported from another of the project)
        that what it returns depends on
        (`seq_len = _offsets(H, seq_offsets)` returning `tl.load(seq_offsets + pid // H + 1) - ...` depends on
        none: loaded data and a split program index); None for any other call, or past the depth."""
        if not self.depth:
            return None
        model = self.model
        helper = model.local_function(call.func.id) if isinstance(call.func, ast.Name) else None
        if helper is None:  # a jit helper imported from another module of the project
            name = model.qualify(call.func)
            found = jit_function_in(model.imported, name) if name is not None and not name.startswith(
                (f"{model.module}.", "triton.", "torch.")) else None
            model, helper = found if found is not None else (model, None)
        if helper is None or helper.node is None or helper is self.function:
            return None
        passed = dict(zip((p.name for p in helper.params), call.args))
        passed.update({kw.arg: kw.value for kw in call.keywords if kw.arg})
        placed = frozenset(name for name, value in passed.items() if self._is_position(value))
        body, callee = helper.node, helper

        def returned() -> frozenset[str]:
            inner = KernelUses(model, callee, set(), self.depth - 1, scan=False, positions=placed)
            return frozenset().union(*(inner.params_of(node.value) for node in walk(body)
                                       if isinstance(node, ast.Return) and node.value is not None))

        depends = self.model.memoized(("tl006-returns", helper.qualname, self.depth - 1, placed), returned)
        return [value for name, value in passed.items() if name in depends]

    def _rebound(self, name: ast.Name) -> list[ast.expr] | None:
        """The values a parameter holds at this use when only plain assignments in the kernel reach it (the
        argument itself is dead here), else None."""
        if not isinstance(self.function.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        definitions = flow_of(self.function.node).reaching(name)
        if not definitions or any(d.kind != "assign" or d.value is None for d in definitions):
            return None
        return [d.value for d in definitions]  # type: ignore[misc]

    def _mentions_tuned(self, expr: ast.AST) -> bool:
        return not self._walk(expr)[0].isdisjoint(self.tuned)

    def _along_block(self, expr: ast.AST) -> bool:
        """The expression holds positions along a tuned block (`offs = start + tl.arange(0, BLOCK)`); a value
        loaded from such positions is data, not a position (`idx = tl.load(IDX + offs)`)."""
        found = self._along.get(id(expr))
        if found is None:
            found = False
            stack: list[ast.AST] = [expr]
            while stack and not found:
                node = stack.pop()
                if isinstance(node, ast.Name):
                    found = node.id in self.along_block
                    continue
                if isinstance(node, ast.Call):
                    name = self.model.qualify(node.func)
                    if name in MEMORY_CALLS or name is None and isinstance(node.func, ast.Attribute) \
                            and node.func.attr in DESCRIPTOR_METHODS:
                        continue
                    if name == ARANGE and node.args and self._mentions_tuned(node.args[-1]):
                        found = True
                        continue
                stack.extend(children(node))
            self._along[id(expr)] = found
        return found

    # ---- uses -----------------------------------------------------------------------------------------
    def _note(self, names: set[str], kind: str, node: ast.AST, text: str | None = None) -> None:
        for name in sorted(names):
            if kind == "mode" and name not in self.constexprs:
                continue
            if kind != "mode" and "stride" in name_words(name):
                continue  # a stride scales positions and bounds alike (`h * stride < H * stride`): layout, not size
            self.kinds.setdefault(name, set()).add(kind)
            current = self.reasons.get(name)
            if current is None or KINDS.index(kind) < KINDS.index(current.kind):
                self.reasons[name] = Reason(kind, node.lineno, text or _short(ast.unparse(node)))  # type: ignore[attr-defined]

    def _scan(self, root: ast.AST, depth: int) -> None:
        nodes = walk(root)
        dead = {id(sub) for node in nodes if isinstance(node, ast.If) and _never_true(node.test)
                for stmt in node.body for sub in walk(stmt)}  # `if ... and False:`: code switched off
        for node in nodes:
            if id(node) in dead:
                continue
            if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, ast.Call):
                call = node.iter
                name = self.model.qualify(call.func) or (call.func.id if isinstance(call.func, ast.Name) else None)
                if name in LOOP_CALLS and call.args and self._loop_works(node) and not self._repeats_inner_loops(node, call):
                    bounds = call.args[:2]  # start and stop; a step (NUM_SMS, BLOCK) strides over them
                    header = f"for {ast.unparse(node.target)} in {_short(ast.unparse(call))}"
                    self._note(set().union(*(self.params_of(b) for b in bounds)), "loop", node, header)
            elif isinstance(node, ast.While) and self._loop_works(node):
                self._note(self.params_of(node.test), "loop", node, f"while {_short(ast.unparse(node.test))}")
            elif isinstance(node, ast.Call) and self.model.qualify(node.func) in CDIV and len(node.args) == 2:
                if self._mentions_tuned(node.args[1]) and not self._loop_period(node):
                    self._note(self.params_of(node.args[0]), "extent", node)
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and self._mentions_tuned(node.right) \
                    and not self._loop_period(node):
                self._note(self.params_of(node.left), "extent", node)
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and \
                    isinstance(node.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) and id(node) in self._memory_masks():
                for side, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
                    if self._along_block(side) and not self._along_block(other):
                        self._note(self.params_of(other), "mask", node)
            if isinstance(node, ast.If) and self._changes_work([node.body, node.orelse], node):
                self._note(self._selector_params(node.test), "mode", node, f"if {_short(ast.unparse(node.test))}:")
                self._note_optional(node)
            elif isinstance(node, ast.IfExp) and self._changes_work([[node.body], [node.orelse]], node):
                self._note(self._selector_params(node.test), "mode", node)
            if depth and isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                self._follow_helper(node, depth)

    def _note_optional(self, branch: ast.If) -> None:
        """A flag guarding the only uses of a tensor argument (`if HAS_BIAS: b = tl.load(bias_ptr + ...)`): the
        tensor is probably None when the flag is off, and Triton's key already tells None from a tensor."""
        flags = {n.id for n in walk(branch.test) if isinstance(n, ast.Name) and n.id in self.constexprs}
        if not flags:
            return
        inside = {n.id for stmt in branch.body for n in walk(stmt) if isinstance(n, ast.Name) and n.id in self.params}
        if self._param_uses is None:
            self._param_uses = [n for n in walk(self.function.node)  # type: ignore[arg-type]
                                if isinstance(n, ast.Name) and n.id in self.params]
        outside = {n.id for n in self._param_uses if not self._guarded(n, flags)}
        guarded = (inside - outside - self.constexprs) & self._tensor_like()
        for flag in flags if guarded else ():
            self.optional_guards.setdefault(flag, set()).update(guarded)
            if _truth_test(branch.test):
                self.truth_guards.add(flag)

    def _tensor_like(self) -> set[str]:
        """Parameters that may be tensors: they reach the address of a load, store or descriptor, or go to a
        helper that may use them so. A scalar used only in arithmetic (a dropout seed or rate) is never None
        when its flag is off, so Triton's key does not tell the two paths apart through it."""
        if self._tensors is None:
            self._tensors = set()
            for node in walk(self.function.node):  # type: ignore[arg-type]
                if not isinstance(node, ast.Call):
                    continue
                name = self.model.qualify(node.func) or ""
                if name in MEMORY_CALLS or name in BLOCK_POINTERS:
                    pointer = self._pointer(node)
                    reaching = [pointer] if pointer is not None else []
                elif name.startswith(TL + ".") or isinstance(node.func, ast.Attribute) and not name \
                        or isinstance(node.func, ast.Name) and hasattr(builtins, node.func.id):
                    continue
                else:
                    reaching = [*node.args, *(k.value for k in node.keywords)]
                for expr in reaching:
                    self._tensors |= self.params_of(expr)
        return self._tensors

    def _guarded(self, name: ast.Name, flags: set[str]) -> bool:
        if self._guards is None:
            self._guards = {}
            for node in walk(self.function.node):  # type: ignore[arg-type]
                if isinstance(node, ast.If):
                    tested = frozenset(n.id for n in walk(node.test) if isinstance(n, ast.Name))
                    for stmt in node.body:
                        for sub in walk(stmt):
                            self._guards.setdefault(id(sub), set()).update(tested)
        return bool(self._guards.get(id(name), set()) & flags)

    def _changes_work(self, arms: Sequence[Sequence[ast.AST]], node: ast.AST) -> bool:
        """Whether the arms of a branch differ in work, not just in a few scalar operations: one arm has memory
        traffic, tl.dot, a loop or a call into a helper that does such work, or only one arm runs
        transcendental math inside a loop (a soft cap on every tile). Choosing between two formulas (exp or
        exp2, softplus or sigmoid) changes no work."""
        in_loop = self._in_loop(node)
        if (not in_loop or self._after_inner_main_loop(node)) and self._has_main_loop() \
                and all(self._epilogue_only(arm) for arm in arms):
            return False  # a bias, scale or extra output around the main loop: a sliver of the loop's traffic
        kinds = [self._work(arm, in_loop) for arm in arms]
        if kinds == [STRUCTURAL_WORK, STRUCTURAL_WORK] and self._operations(arms[0]) == self._operations(arms[1]):
            return False  # the same loads, stores, dots and loops in both arms: a formula or a layout differs
        return STRUCTURAL_WORK in kinds or (MATH_WORK in kinds and NO_WORK in kinds)

    def _after_inner_main_loop(self, node: ast.AST) -> bool:
        """The innermost loop around `node` also runs, beside it, a loop over memory (cvmm's `for matrix_id`, each
        pass a whole K loop and then the tile's store): `node` is the epilogue of each pass, not work in a loop."""
        if self.called_in_loop:
            return False
        child, parent = node, self._parent_map().get(id(node))
        while parent is not None and not (isinstance(parent, LOOPS) and any(child is s for s in parent.body)):
            child, parent = parent, self._parent_map().get(id(parent))
        return parent is not None and any(
            isinstance(inner, LOOPS) and self._over_memory(inner) and not any(sub is node for sub in walk(inner))
            for stmt in parent.body for inner in walk(stmt))

    def _has_main_loop(self) -> bool:
        """The kernel itself loops over memory (a K loop of a GEMM, a GEMV's or a scan's loop of loads)."""
        if self._main_loop is None:
            self._main_loop = any(isinstance(loop, LOOPS) and self._over_memory(loop)
                                  for loop in walk(self.function.node))  # type: ignore[arg-type]
        return self._main_loop

    def _over_memory(self, loop: ast.AST) -> bool:
        return any(isinstance(sub, ast.Call) and self.model.qualify(sub.func) in MEMORY_CALLS for sub in walk(loop))

    def _parent_map(self) -> dict[int, ast.AST]:
        if self._parents is None:
            self._parents = parents(self.function.node)  # type: ignore[arg-type]
        return self._parents

    def _epilogue_only(self, arm: Sequence[ast.AST]) -> bool:
        """An arm that only loads, stores and computes, once per program outside every loop (`if HAS_BIAS:
        acc += tl.load(bias_ptr + offs_n)`, also through a block pointer to the tile): no loop, tl.dot, atomic,
        descriptor or helper. Beside a kernel's main loop this is a sliver of its traffic and does not change which
        config is best."""
        return not any(isinstance(sub, LOOPS)
                       or isinstance(sub, ast.Call) and self._costly(sub)
                       and self.model.qualify(sub.func) not in EPILOGUE_CALLS
                       for part in arm for sub in walk(part))

    def _operations(self, arm: Sequence[ast.AST]) -> Counter[str]:
        """What an arm does that costs, as written (casts aside): its loops, memory and descriptor calls,
        tl.dot calls and helper calls. Two arms that differ only around these (a sign, a scale, an index
        cast) do the same work; arms that address memory differently (another layout) do not."""
        found: Counter[str] = Counter()
        for part in arm:
            for sub in walk(part):
                if isinstance(sub, LOOPS):
                    found["loop " + _without_casts(sub.iter if isinstance(sub, (ast.For, ast.AsyncFor)) else sub.test)] += 1
                elif isinstance(sub, ast.Call) and self._costly(sub):
                    found[_without_casts(_without_accumulator(sub) if self.model.qualify(sub.func) == DOT else sub)] += 1
        return found

    def _costly(self, call: ast.Call) -> bool:
        """A call that costs beyond arithmetic: memory, tl.dot, a block pointer or descriptor, or a helper."""
        name = self.model.qualify(call.func)
        return name in MEMORY_CALLS or name in BLOCK_POINTERS \
            or name is None and isinstance(call.func, ast.Attribute) and call.func.attr in DESCRIPTOR_METHODS \
            or isinstance(call.func, ast.Name) and not hasattr(builtins, call.func.id) \
            or name is not None and not name.startswith(TL + ".")

    def _values_only(self, call: ast.Call) -> bool:
        """No argument of the call depends on a runtime (non-constexpr) argument of the kernel: what it
        receives was computed from loaded data and constexprs, so it carries no pointer."""
        runtime = self.params - self.constexprs
        return not any(self.params_of(arg) & runtime for arg in [*call.args, *(k.value for k in call.keywords)])

    def _work(self, branch: Sequence[ast.AST], in_loop: bool, depth: int = 2, own: bool = True) -> int:
        """The work statements do: STRUCTURAL_WORK (a loop, a tile load or store, tl.dot, a descriptor, a
        helper that does any of these or that this module cannot show, unless the kernel hands it only
        values it computed), MATH_WORK (transcendental math inside
        a loop) or NO_WORK. Outside loops, a load of a few elements fixed by literals (a 16-entry lookup table,
        `tl.arange(0, 16)`) is like a few scalar loads: its cost does not depend on any size or config."""
        kind = NO_WORK
        for part in branch:
            for sub in walk(part):
                if isinstance(sub, LOOPS):
                    return STRUCTURAL_WORK
                if not isinstance(sub, ast.Call):
                    continue
                name = self.model.qualify(sub.func)
                if name in BLOCK_POINTERS or name in MEMORY_CALLS and (name.endswith(".dot") or self._on_tile(sub)):
                    if name in BLOCK_POINTERS or name.endswith(".dot") or in_loop or not self._fixed_size(sub):
                        return STRUCTURAL_WORK  # a scalar load (one flag, one count) does not change the work
                    continue
                if isinstance(sub.func, ast.Attribute) and sub.func.attr in DESCRIPTOR_METHODS and name is None:
                    return STRUCTURAL_WORK  # desc.load([...])
                if name is not None and name.startswith(TL + "."):
                    if in_loop and _transcendental(name.rpartition(".")[2]):
                        kind = MATH_WORK
                    continue
                if isinstance(sub.func, ast.Name) and hasattr(builtins, sub.func.id):
                    continue
                if name is None and isinstance(sub.func, ast.Attribute):
                    continue  # a method of a tensor value: x.to(...), acc.reshape(...)
                helper = self.model.local_function(sub.func.id) if isinstance(sub.func, ast.Name) else None
                if helper is not None and helper.node is not None and helper is not self.function and depth:
                    kind = max(kind, self._work(helper.node.body, in_loop, depth - 1, own=False))  # by its body
                elif helper is None and (set(name_words((name or "").rpartition(".")[2])) & MATH_HELPER_WORDS
                                         or own and self._values_only(sub)):
                    # exp2, log, softplus from a utility module; an imported helper handed only values the
                    # kernel computed (`acc = gelu(acc)`): no pointer reaches it, so it can only do math
                    kind = max(kind, MATH_WORK if in_loop else NO_WORK)
                else:
                    return STRUCTURAL_WORK  # a jit helper this module cannot show (leaky_relu, gather)
                if kind == STRUCTURAL_WORK:
                    return kind
        return kind

    def _memory_masks(self) -> set[int]:
        if self._masks is None:
            self._masks = memory_masks(self.model, self.function.node)[0]  # type: ignore[arg-type]
        return self._masks

    def _assigned_values(self) -> dict[str, list[ast.expr]]:
        if self._values is None:
            self._values = {}
            for node in walk(self.function.node):  # type: ignore[arg-type]
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                    for name, value in _assigned_pairs(node):
                        self._values.setdefault(name, []).append(value)
        return self._values

    def _tiles(self) -> set[str]:
        """Local names that hold a tile (or a tile of pointers), not one scalar."""
        if self._tile_names is None:
            self._tile_names = set()
            changed = True
            while changed:
                changed = False
                for name, values in self._assigned_values().items():
                    if name not in self._tile_names and any(self._mentions_tile(value) for value in values):
                        self._tile_names.add(name)
                        changed = True
        return self._tile_names

    @staticmethod
    def _pointer(call: ast.Call) -> ast.expr | None:
        return call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("pointer", "ptr")), None)

    def _on_tile(self, call: ast.Call) -> bool:
        """A load or store whose pointer is a tile (built from tl.arange or a block pointer), not one scalar."""
        self._tiles()
        pointer = self._pointer(call)
        return pointer is not None and self._mentions_tile(pointer)

    def _mentions_tile(self, expr: ast.AST) -> bool:
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Name) and node.id in (self._tile_names or ()):
                return True
            if isinstance(node, ast.Call):
                name = self.model.qualify(node.func) or ""
                if name in TILE_MAKERS:
                    return True
                if name in REDUCTIONS and len(node.args) < 2 and not any(k.arg == "axis" for k in node.keywords):
                    continue  # a whole tile reduced to one scalar
            stack.extend(children(node))
        return False

    def _fixed_size(self, call: ast.Call) -> bool:
        """A load or store whose tile is sized by literals only: every tl.arange its pointer is built from
        (through local names) has constant bounds, and nothing else makes it a tile."""
        pointer = self._pointer(call)
        stack: list[ast.AST] = [pointer] if pointer is not None else []
        seen: set[str] = set()
        aranges = 0
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Call):
                name = self.model.qualify(node.func) or ""
                if name == ARANGE:
                    if not all(isinstance(a, ast.Constant) for a in node.args):
                        return False
                    aranges += 1
                    continue
                if name in TILE_MAKERS:
                    return False
            if isinstance(node, ast.Name) and node.id not in seen and node.id in self._tiles():
                seen.add(node.id)
                stack.extend(self._assigned_values().get(node.id, []))
            stack.extend(children(node))
        return aranges > 0

    def _loop_period(self, node: ast.expr) -> bool:
        """A count of blocks that only divides a loop index (`g_id = k // (group_size // BLOCK_K)`: which scale
        group a K step falls in): it chooses what each step loads, not how many steps or tiles there are."""
        parent = self._parent_map().get(id(node))
        uses: list[ast.expr] = [node]
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            name = parent.targets[0].id
            uses = [n for n in walk(self.function.node) if isinstance(n, ast.Name)  # type: ignore[arg-type]
                    and n.id == name and isinstance(n.ctx, ast.Load)]
        divides = [self._parent_map().get(id(use)) for use in uses]
        return bool(uses) and all(isinstance(p, ast.BinOp) and isinstance(p.op, (ast.FloorDiv, ast.Mod))
                                  and p.right is use and self._mentions_loop_index(p.left) for use, p in zip(uses, divides))

    def _mentions_loop_index(self, expr: ast.expr) -> bool:
        if self._loop_indices is None:
            self._loop_indices = {n.id for loop in walk(self.function.node)  # type: ignore[arg-type]
                                  if isinstance(loop, (ast.For, ast.AsyncFor)) for n in walk(loop.target)
                                  if isinstance(n, ast.Name)}
            changed = True
            while changed:
                changed = False
                for name, values in self._assigned_values().items():
                    if name not in self._loop_indices and any(
                            isinstance(n, ast.Name) and n.id in self._loop_indices for v in values for n in walk(v)):
                        self._loop_indices.add(name)
                        changed = True
        return any(isinstance(n, ast.Name) and n.id in self._loop_indices for n in walk(expr))

    def _repeats_inner_loops(self, loop: ast.For | ast.AsyncFor, call: ast.Call) -> bool:
        """An outer loop of step 1 whose bounds no tuned block enters, around inner loops that do the work (`for b
        in range(B):` over a per-sample GEMM): each iteration repeats the same tiled work, so every config's time
        scales alike with the count, and the config best at one value stays best (1.00x-1.05x on an H100,
        docs/precision/bench/tl006_batch_loop.py). An innermost loop is not one: its count sets how its software
        pipeline (num_stages) pays off."""
        step = call.args[2] if len(call.args) > 2 else None
        if step is not None and not (isinstance(step, ast.Constant) and step.value == 1):
            return False
        if any(self._mentions_tuned(bound) for bound in call.args[:2]):
            return False
        return any(isinstance(sub, LOOPS) for part in loop.body for sub in walk(part))

    def _loop_works(self, loop: ast.For | ast.AsyncFor | ast.While) -> bool:
        """A loop that does work: memory traffic (one scalar per step counts), tl.dot, an inner loop, a helper,
        transcendental math, or arithmetic on tiles. A few steps of scalar arithmetic in registers (a Sinkhorn
        normalisation of per-token scalars) cost next to nothing beside the kernel's tiles."""
        if self._work(loop.body, True) != NO_WORK:
            return True
        tiles = self._tiles()
        for sub in (s for part in loop.body for s in walk(part)):
            if isinstance(sub, ast.Call) and (self.model.qualify(sub.func) or "") in MEMORY_CALLS:
                return True
            if isinstance(sub, ast.Name) and sub.id in tiles:
                return True
        return False

    def _in_loop(self, node: ast.AST) -> bool:
        if self.called_in_loop:
            return True
        if self._loops is None:
            self._loops = {id(sub) for loop in walk(self.function.node)  # type: ignore[arg-type]
                           if isinstance(loop, LOOPS)
                           for stmt in loop.body for sub in walk(stmt)}
        return id(node) in self._loops

    def _follow_helper(self, call: ast.Call, depth: int) -> None:
        """Uses inside a jit helper of this module, mapped back through the call's arguments."""
        helper = self.model.local_function(call.func.id)  # type: ignore[attr-defined]
        if helper is None or helper.node is None or helper is self.function:
            return
        passed: dict[str, ast.expr] = dict(zip((p.name for p in helper.params), call.args))
        passed.update({kw.arg: kw.value for kw in call.keywords if kw.arg})
        tuned = {name for name, arg in passed.items() if self._mentions_tuned(arg)}
        inner = KernelUses(self.model, helper, tuned, depth - 1, self._in_loop(call))
        for helper_param, reason in inner.reasons.items():
            if helper_param in passed:
                text = f"{reason.text}` in {helper.name} (line {reason.line}), called as `{_short(ast.unparse(call))}"
                for kind in sorted(inner.kinds.get(helper_param, ()), key=KINDS.index):
                    self._note(self.params_of(passed[helper_param]), kind, call, text)


def memory_masks(model: ModuleModel, function: ast.FunctionDef | ast.AsyncFunctionDef,
                 depth: int = 2) -> tuple[set[int], set[str]]:
    """The nodes, and the local names, of every expression that can bound memory traffic in a jit function:
    the mask of a load, store or atomic, what the local names used there are assigned, and what is passed
    for a parameter that a helper of this module uses that way. A comparison elsewhere
    (`tl.where(x > threshold, ...)`, a value picked per element) sizes no work."""
    values: dict[str, list[ast.expr]] = {}
    for node in walk(function):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            for name, value in _assigned_pairs(node):
                values.setdefault(name, []).append(value)
    roots: list[ast.expr] = []
    for call in (n for n in walk(function) if isinstance(n, ast.Call)):
        name = model.qualify(call.func) or ""
        if name in MEMORY_CALLS and not name.endswith((".dot", ".dot_scaled")):
            position = 1 if name.endswith("load") else 2
            mask = next((k.value for k in call.keywords if k.arg == "mask"), None)
            if mask is None and len(call.args) > position:
                mask = call.args[position]
            roots += [mask] if mask is not None else []
        elif depth and isinstance(call.func, ast.Name):
            helper = model.local_function(call.func.id)
            if helper is not None and helper.node is not None and helper.node is not function:
                used = memory_masks(model, helper.node, depth - 1)[1]
                passed = [*zip((p.name for p in helper.params), call.args),
                          *((k.arg, k.value) for k in call.keywords if k.arg)]
                roots += [value for param, value in passed if param in used]
    nodes: set[int] = set()
    names: set[str] = set()
    while roots:
        for node in walk(roots.pop()):
            nodes.add(id(node))
            if isinstance(node, ast.Name) and node.id not in names:
                names.add(node.id)
                roots += values.get(node.id, [])
    return nodes, names


def _transcendental(name: str) -> bool:
    """`tl.exp`, or libdevice's spellings of the same math (`fast_powf`, `fast_expf`, `powf`)."""
    return name in TRANSCENDENTAL or name.removeprefix("fast_").removesuffix("f") in TRANSCENDENTAL


def _truth_test(test: ast.expr) -> bool:
    """`HAS_X`, `not HAS_X`, `HAS_X and not IS_Y`: flags tested for truth, not modes compared with a value."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _truth_test(test.operand)
    if isinstance(test, ast.BoolOp):
        return all(_truth_test(value) for value in test.values)
    return isinstance(test, ast.Name)


def _is_program_index(name: str) -> bool:
    """tl.program_id, tl.num_programs, or a helper that wraps them (unflatten_program_id, get_program_id)."""
    return name in PROGRAM_INDEX or "program_id" in name.rpartition(".")[2]


def _assigned_pairs(assign: ast.Assign | ast.AnnAssign | ast.AugAssign) -> list[tuple[str, ast.expr]]:
    """(name, value) for each name an assignment binds; `a, b = x, y` pairs a with x and b with y."""
    value: ast.expr = assign.value  # type: ignore[assignment]
    targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
    pairs = []
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts):
            pairs += [(n.id, part) for element, part in zip(target.elts, value.elts)
                      for n in walk(element) if isinstance(n, ast.Name)]
        else:
            pairs += [(n.id, value) for n in walk(target) if isinstance(n, ast.Name)]
    return pairs


def _short(text: str, limit: int = 60) -> str:
    """One line of source for a message: `[ "M", "N", ]` over three lines reads `["M", "N"]`."""
    text = " ".join(text.split()).replace("[ ", "[").replace("( ", "(").replace(", ]", "]").replace(", )", ")")
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- what covers an omission -----------------------------------------------------------------------------
def bucketed_by(name: str, key: list[str]) -> str | None:
    """A key argument that buckets this one: its name holds this name's words (CACHE_KEY_SEQLEN_Q for seqlen_q)."""
    words = name_words(name)
    for entry in key:
        entry_words = name_words(entry)
        if entry_words == words or is_block_name(entry):
            continue
        if any(entry_words[i:i + len(words)] == words for i in range(len(entry_words) - len(words) + 1)):
            return entry
    return None


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the line breaks Python's ast counts


def comments_by_line(text: str) -> dict[int, str]:
    comments: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return comments


def _comment_block_above(comments: dict[int, str], lines: list[str], line: int) -> int:
    """The first line of the block of comment-only lines that ends right above `line` (`line` where none)."""
    above = line - 1
    while above >= 1 and above in comments and lines[above - 1].lstrip().startswith("#"):
        above -= 1
    return above + 1


def explaining_comment(model: ModuleModel, text: str, first_line: int, last_line: int, name: str,
                       docstring: str | None = None, key_lines: tuple[int, int] | None = None,
                       parameters: frozenset[str] = frozenset()) -> str | None:
    """A note about the key that names the argument or says why something is left out: the comments on the
    autotune call's lines, the comment block right above them (or comments among the three lines above),
    or the docstring of the function that builds the configs. A block counts as one note: authors spread
    "empty key: every dim it sees (M, KV_N, steps) is data-dependent" over several lines. Comments on the
    `key=` argument's own lines, or in the block right above it, are about the key without saying "key"
    (`key=['N', 'K']  # NOT M! M varies per step`), and explain the arguments they name, or every one where
    they name none of the kernel's `parameters` (not `block_size` where the note says why `topk` is left out)."""
    window = max(1, first_line - 3)
    lines = _LINE_BREAK.split(text)
    notes = [(docstring, False)] if docstring else []
    if "#" in "".join(lines[window - 1:last_line]):
        comments = model.memoized(("comments_by_line",), lambda: comments_by_line(text))
        start = min(_comment_block_above(comments, lines, first_line), window)
        notes.append((" ".join(comments[line] for line in range(start, last_line + 1) if line in comments), False))
        if key_lines is not None:
            start = _comment_block_above(comments, lines, key_lines[0])
            notes.append((" ".join(comments[line] for line in range(start, key_lines[1] + 1) if line in comments), True))
    for note, on_key in notes:
        if not note or not (on_key or _KEY_WORD.search(note)):
            continue
        if _names(note, name) or _EXPLAINS.search(note) and not (
                on_key and any(_names(note, other) for other in parameters - {name})):
            return note
    return None


def _names(text: str, name: str) -> bool:
    """`text` holds `name` as a word of its own."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def _never_true(test: ast.expr) -> bool:
    """A test written to be false: `False`, `0`, `... and False`."""
    if isinstance(test, ast.Constant):
        return not test.value
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_never_true(value) for value in test.values)
    return False


def _without_accumulator(call: ast.Call) -> ast.Call:
    """`tl.dot(a, b, acc)` as `tl.dot(a, b)`: accumulating in the dot or adding its result after
    (`acc += tl.dot(a, b)`) is the same dot on the same tiles."""
    return ast.Call(call.func, call.args[:2], [kw for kw in call.keywords if kw.arg != "acc"])


def _without_casts(node: ast.AST) -> str:
    """The text of an expression with its casts removed: `x.to(tl.int64)` and `tl.cast(x, ...)` read as x."""
    class Strip(ast.NodeTransformer):
        def visit_Call(self, call: ast.Call) -> ast.AST:
            self.generic_visit(call)
            if isinstance(call.func, ast.Attribute) and call.func.attr == "to":
                return call.func.value
            if last_name(call.func) == "cast" and call.args:
                return call.args[0]
            return call

    return ast.unparse(Strip().visit(copy.deepcopy(node)))


def _dereferenced(arguments: list[ast.expr], name: str) -> bool:
    """Some launch argument reads an attribute of `name` on every path (`cache_mask.stride(0)`): that
    tensor is never None at this launch."""
    for argument in arguments:
        pending: list[ast.AST] = [argument]
        while pending:
            node = pending.pop()
            if isinstance(node, ast.IfExp):
                pending.append(node.test)  # what the arms do happens on one path only
                continue
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
                return True
            pending.extend(children(node))
    return False


class LaunchValues:
    """What the project's launches of the kernel pass, reduced to the host values they derive from: this
    module's launches, and once the project's launch index exists, those of every other module."""

    def __init__(self, model: ModuleModel, kernel: JitFunction, project: Project | None = None) -> None:
        self.sites: list[tuple[HostScope, dict[str, ast.expr]]] = []
        self.open: set[int] = set()  # indices of launches with *args or **kwargs: an unnamed argument may be there
        self.elsewhere: list[tuple[str, int]] = []  # (file, line) of the launches in other modules
        self._lines: list[int] = []  # the line of each site
        self.grids: list[ast.expr | None] = []  # the grid of each site (None: a hand-off, grid unknown)
        self.project = project
        self._add_launches(model, kernel, {kernel.qualname}, local=True)
        for other, names in project.launching_modules(kernel.qualname) if project is not None else ():
            before = len(self.sites)
            self._add_launches(other, kernel, set(names), local=False)
            display = project.displays.get(other.module, other.path)  # type: ignore[union-attr]
            self.elsewhere += [(display, scope_line) for scope_line in self._lines[before:]]

    def _add_launches(self, model: ModuleModel, kernel: JitFunction, names: set[str], local: bool) -> None:
        """The launches of one module that start the kernel, known in it by `names`."""
        starting = {id(launch) for launch in launches_starting(model, kernel, None if local else frozenset(names))}
        for launch in model.launches:
            direct = id(launch) in starting
            facts = {} if direct else _chooses(model, launch, names)
            if facts is None:
                continue
            scope = HostScope.of(model, launch.scope)
            bound = bind_launch(model, launch, kernel, facts)  # the arm of a spread this kernel runs
            if bound.open:
                self.open.add(len(self.sites))
            passed = bound.values
            self.sites.append((scope, {name: _known(value, facts) for name, value in passed.items()}))
            self._lines.append(launch.line)
            self.grids.append(launch.grid)
        self._add_handoffs(model, kernel, names)

    def _add_handoffs(self, model: ModuleModel, kernel: JitFunction, names: set[str]) -> None:
        """Launches through a wrapper that gets the kernel and its arguments by keyword,
        `launch_autotuned(kernel, grid, x_ptr=x, HAS_Z=z is not None)`: what the wrapper passes on."""
        params = {p.name for p in kernel.params}
        if not any(model.may_hand_over(name.rpartition(".")[2]) for name in names):
            return
        launched = {id(launch.node) for launch in model.launches}  # a wrapper the model reads is a launch already
        for name in sorted(names):
            for scope, call in model.calls_by_first_argument.get(name, ()):
                if id(call) in launched:
                    continue
                passed = {kw.arg: kw.value for kw in call.keywords if kw.arg in params}
                if not passed:
                    continue  # the kernel handed over without its arguments (a registry, a decorator)
                if any(kw.arg is None for kw in call.keywords):
                    self.open.add(len(self.sites))
                self.sites.append((HostScope.of(model, scope), passed))
                self._lines.append(call.lineno)
                self.grids.append(None)

    def sources(self, scope: HostScope, expr: ast.expr, depth: int = 4) -> set[str]:
        """The host values an expression is computed from (`x.shape[1]`, a function argument), through the
        function's assignments; literals, module constants and imported names contribute nothing."""
        if isinstance(expr, ast.Constant) or self._reads_dtype(expr) and not isinstance(expr, ast.Name):
            return set()  # literals; a tensor's dtype or element size, which Triton keys itself
        if isinstance(expr, ast.Name):
            if scope.node is not None and expr.id in scope.values:
                values = scope.values_of(expr.id)
                if values is None or not depth:
                    return {expr.id}
                return set().union(set(), *(self.sources(scope, v, depth - 1) for v in values
                                            if not any(isinstance(n, ast.Name) and n.id == expr.id for n in walk(v))))
            if expr.id in scope.model.local_names or expr.id in scope.model.imports:
                return set()  # a module-level value: the same on every call of this process
            return {expr.id}
        if isinstance(expr, ast.Call):
            if scope.model.qualify(expr.func) is None and not (isinstance(expr.func, ast.Name) and hasattr(builtins, expr.func.id)):
                return {ast.unparse(expr)}  # a method of a host object: x.size(0)
            return set().union(set(), *(self.sources(scope, a, depth) for a in [*expr.args, *(k.value for k in expr.keywords)]))
        if isinstance(expr, (ast.Attribute, ast.Subscript)):
            if scope.model.qualify(expr) is not None:
                return set()
            saved = self._saved_on_ctx(scope, expr) if depth else None
            if saved is not None and not any(self.sources(saved[0], v, depth - 1) for v in saved[1]):
                return set()  # forward saved a constant there (`ctx.chunk_size = 64`)
            return {ast.unparse(expr)}
        if isinstance(expr, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Tuple)):
            return set().union(set(), *(self.sources(scope, c, depth) for c in ast.iter_child_nodes(expr) if isinstance(c, ast.expr)))
        return {ast.unparse(expr)}

    def _saved_on_ctx(self, scope: HostScope, expr: ast.expr) -> tuple[HostScope, list[ast.expr]] | None:
        """In the `backward` of an autograd Function, `ctx.chunk_size` is what `forward` saved there
        (`ctx.chunk_size = BT`): forward's scope and the values it assigns there."""
        function = scope.node
        if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and function is not None
                and function.name == "backward" and function.args.args and expr.value.id == function.args.args[0].arg):
            return None
        forward = autograd_forward(scope.model, function)
        if forward is None:
            return None
        ctx = forward.args.args[0].arg
        values = [node.value for node in walk(forward) if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Attribute) and t.attr == expr.attr and isinstance(t.value, ast.Name) and t.value.id == ctx
            for t in node.targets)]
        return (HostScope.of(scope.model, forward), values) if values else None

    def _flag_value(self, scope: HostScope, expr: ast.expr, depth: int = 3) -> list[ast.expr]:
        """A flag's value and, through local names, the flag-like values it is computed from (comparisons,
        boolean logic, names and attributes; never a call that builds a tensor)."""
        found = [expr]
        if depth:
            for name in {n.id for n in walk(expr) if isinstance(n, ast.Name)}:
                for value in scope.values_of(name) or ():
                    if isinstance(value, (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Name, ast.Attribute, ast.IfExp)):
                        found += self._flag_value(scope, value, depth - 1)
        return found

    @staticmethod
    def _reads_dtype(expr: ast.expr) -> bool:
        """`x.dtype == ...`, `w_dtype.is_floating_point`, `kv_cache_dtype == "fp8"`."""
        for node in walk(expr):
            word = last_name(node)
            if word is not None and (_DTYPE_TEXT.search(word)):
                return True
        return False

    def _none_test(self, scope: HostScope, expr: ast.expr, passed: set[str], depth: int = 3) -> bool:
        """`x is not None` (or a combination of such tests) about tensors the launch passes to the kernel."""
        if isinstance(expr, ast.Name) and depth:
            values = scope.values_of(expr.id)
            return values is not None and len(values) == 1 and self._none_test(scope, values[0], passed, depth - 1)
        if isinstance(expr, ast.Attribute) and depth:  # ctx.has_weight = weight is not None, saved by forward
            saved = self._saved_on_ctx(scope, expr)
            return saved is not None and all(self._none_test(saved[0], v, passed, depth - 1) for v in saved[1])
        if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], (ast.Is, ast.IsNot)):
            other = expr.comparators[0]
            return isinstance(other, ast.Constant) and other.value is None and ast.unparse(expr.left) in passed
        if isinstance(expr, ast.BoolOp):
            return all(self._none_test(scope, v, passed, depth) for v in expr.values)
        if isinstance(expr, ast.IfExp) and isinstance(expr.body, ast.Constant) and isinstance(expr.orelse, ast.Constant):
            return self._none_test(scope, expr.test, passed, depth)  # True if beta is not None else False
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "bool" and len(expr.args) == 1:
            return self._none_test(scope, expr.args[0], passed, depth)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and len(expr.args) == 1 \
                and _is_none_check(scope.function_def(expr.func.id)):
            return self._none_test(scope, ast.Compare(left=expr.args[0], ops=[ast.IsNot()],
                                                      comparators=[ast.Constant(None)]), passed, depth)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            return self._none_test(scope, expr.operand, passed, depth)
        return False

    def tracks_none(self, name: str, tensors: set[str]) -> bool:
        """Every launch passes the flag with the tensors it alone guards either straight from its own function's
        parameters (`use_xg=use_xg, ixg=x_g`: the callers decide whether the tensors are None), or with one of
        them a value that is None on some path (`idx = None` in the other arm of `if return_counts:`). A flag
        guarding the only uses of a tensor then says whether it is None, which Triton's key sees."""
        if not self.sites:
            return False
        for index, (scope, passed) in enumerate(self.sites):
            flag = passed.get(name)
            values = [passed.get(tensor) for tensor in tensors]
            if index in self.open or flag is None:
                return False
            through = all(isinstance(v, ast.Name) and scope.unbound_parameter(v.id) for v in [flag, *values]) \
                and not any(_dereferenced(list(passed.values()), v.id) for v in values)  # type: ignore[union-attr]
            if not (through or any(v is not None and _may_be_none(scope, v) for v in values)):
                return False
        return True

    def always_passed(self) -> set[str]:
        """The arguments every launch here passes (`BLOCK_SIZE_B=block_b`), whatever the value."""
        if not self.sites:
            return set()
        return set(self.sites[0][1]).intersection(*(passed for _, passed in self.sites[1:]))

    def off_the_grid(self, name: str) -> bool:
        """Every launch in view passes the argument and computes its grid from none of the host values that
        argument comes from (`grid = (cdiv(hw, BLOCK),)` beside `channels=x.shape[0]`): the count leaves the
        number of programs alone."""
        if not self.sites or self.open:
            return False
        for (scope, passed), grid in zip(self.sites, self.grids):
            value = passed.get(name)
            spans = self._grid_sources(scope, grid) if grid is not None else None
            if value is None or spans is None or self.sources(scope, value) & spans:
                return False
        return True

    def _grid_sources(self, scope: HostScope, grid: ast.expr) -> set[str] | None:
        """The host values a grid is computed from, through a local name and a `lambda META: ...`; None when
        it cannot be read (a grid function)."""
        if isinstance(grid, ast.Name) and (values := scope.values_of(grid.id)) is not None and len(values) == 1:
            grid = values[0]
        if isinstance(grid, ast.Lambda):
            grid = grid.body
        if isinstance(grid, ast.Name) and scope.function_def(grid.id) is not None:
            return None
        return self.sources(scope, grid)

    def never_passed(self, name: str) -> bool:
        """No launch here passes the argument: without a default, the autotuner's configs must supply it."""
        return bool(self.sites) and not self.open and all(name not in passed for _, passed in self.sites)

    def follows(self, name: str, key: list[str], default: object | None) -> bool | None:
        """Whether every launch here passes this argument a value computed from what it passes for keyed
        arguments, or one and the same constant; None when no launch here shows it."""
        if not self.sites:
            return None
        constants: set[str] = set()
        seen = 0
        for index, (scope, passed) in enumerate(self.sites):
            value = passed.get(name)
            if value is None and index in self.open:
                continue  # maybe in the **kwargs
            seen += 1
            if value is None:
                if default is None:
                    return False
                constants.add(repr(default))
                continue
            if not self._site_follows(scope, passed, name, key, constants):
                callers = self._caller_sites(scope, passed)
                if not callers or not all(self._site_follows(s, p, name, key, constants) for s, p in callers):
                    return False
        return len(constants) <= 1 if seen else None

    def _site_follows(self, scope: HostScope, passed: dict[str, ast.expr], name: str, key: list[str],
                      constants: set[str]) -> bool:
        """Whether one launch passes the argument a constant (added to `constants`) or a value computed from
        what it passes for keyed arguments."""
        value = passed.get(name)
        if value is None:
            return False
        own = self.sources(scope, value)
        if not own:
            constants.add(ast.unparse(value))
            return True
        leaf = self._leaf(scope, value)
        asserted = _asserted_constant(scope, leaf) if leaf is not None else None
        if asserted is not None:  # `assert n == 1` in the launching function: n has that one value
            constants.add(ast.unparse(asserted))
            return True
        if leaf is not None:  # passed as is (K=K): the key must hold that very value, not a function of it
            return leaf in {self._leaf(scope, passed[k]) for k in key if k in passed}
        keyed = set().union(set(), *(self.sources(scope, passed[k]) for k in key if k in passed))
        # a name passed for a keyed argument is keyed itself, however deep its own sources lie
        keyed |= {value.id for k in key if isinstance(value := passed.get(k), ast.Name)}
        return own <= keyed

    def _caller_sites(self, scope: HostScope, passed: dict[str, ast.expr]) -> list[tuple[HostScope, dict[str, ast.expr]]]:
        """A launch that passes its function's own parameters on (`forward(ctx, x, n_cols, blk_size)` launching
        with `n_cols, blk_size`, also through a local copy: `BC = sub_chunk_size`), seen from each call of that
        function in the project (`project_call_bindings`): what each call binds to those parameters; other launch
        values are kept only when they are constants (a local value means nothing in the caller's scope)."""
        forwarded = {k: leaf for k, v in passed.items()
                     if (leaf := self._leaf(scope, v, depth=3)) is not None and scope.unbound_parameter(leaf)}
        fixed = {k: v for k, v in passed.items() if k not in forwarded and not self.sources(scope, v)}  # literals
        return [(caller, {**fixed, **{k: bound[p] for k, p in forwarded.items() if p in bound}})
                for caller, bound in project_call_bindings(scope, self.project)]

    def _leaf(self, scope: HostScope, expr: ast.expr, depth: int = 4) -> str | None:
        """The host value an expression passes on unchanged (`K`, `x.shape[1]`, `n_rows` after `n_rows = M`),
        or None when it computes something."""
        while isinstance(expr, ast.Name) and depth:
            values = scope.values_of(expr.id)
            if values is None or len(values) != 1:
                break
            expr, depth = values[0], depth - 1
        sources = self.sources(scope, expr)
        return next(iter(sources)) if len(sources) == 1 and next(iter(sources)) == ast.unparse(expr) else None

    def bucketed_in(self, name: str, key: list[str]) -> str | None:
        """A bucket in the key that every launch here computes from this argument's value, such as
        `bucket_M = get_bucket_m(B * S)` for S (a key named like a bucket, or computed by a function named so:
        `lq_key = bucket_seqlen(max_lq)`; not a block size derived from it),
        or a key entry computed from this argument alone by arithmetic (`out_x = dim0 + pad` for in_dim0=dim0: a
        padded size)."""
        buckets = [k for k in key if BUCKET_WORDS & set(name_words(k))]
        found = None
        for scope, passed in self.sites:
            leaf = self._leaf(scope, passed[name]) if name in passed else None
            if leaf is None:
                return None
            named = buckets + [k for k in key if k in passed and k not in buckets and self._bucket_call(scope, passed[k])]
            found = next((k for k in named if k in passed and leaf in self.sources(scope, passed[k])), None) or next(
                (k for k in key if k in passed and leaf in self._rounded_from(scope, passed[k])), None) or next(
                (k for k in key if k in passed and k != name and self.sources(scope, passed[k]) == {leaf}
                 and self._leaf(scope, passed[k]) is None and self._arithmetic(scope, passed[k])), None)
            if found is None:
                return None
        return found

    @staticmethod
    def _bucket_call(scope: HostScope, expr: ast.expr) -> bool:
        """`lq_key = bucket_seqlen(max_seqlen_q)`: a value a function named as a bucket computes."""
        if isinstance(expr, ast.Name):
            values = scope.values_of(expr.id)
            expr = values[0] if values is not None and len(values) == 1 else expr
        name = last_name(expr.func) if isinstance(expr, ast.Call) else None
        return name is not None and bool(BUCKET_WORDS & set(name_words(name)))

    def _rounded_from(self, scope: HostScope, expr: ast.expr, depth: int = 4) -> set[str]:
        """The host values of a size this expression rounds up to a power of two (`triton.next_power_of_2(H)`, a
        helper named so), at most raised to a floor after (`max(16, BLOCK_H)`, also through a reassignment):
        every size up to the next power of two gets the same value and the same tile, so the value buckets the
        size. Empty for anything else; a cap (`min(..., 64)`) is a clip, which maps sizes that need different
        work to one value."""
        if isinstance(expr, ast.Name):
            values = scope.values_of(expr.id)
            if not values or not depth:
                return set()
            own = [v for v in values if not any(isinstance(n, ast.Name) and n.id == expr.id for n in walk(v))]
            rounded = [self._rounded_from(scope, v, depth - 1) for v in own]
            floors_ok = all(self._floor_of(v) is not None for v in values if not any(v is o for o in own))
            return set().union(*rounded) if rounded and all(rounded) and floors_ok else set()
        floored = self._floor_of(expr)
        if floored is not None:
            return self._rounded_from(scope, floored, depth)
        words = set(name_words(last_name(expr.func) or "")) if isinstance(expr, ast.Call) else set()
        if not (len(getattr(expr, "args", ())) == 1 and "next" in words and ("pow2" in words or {"power", "of", "2"} <= words)):
            return set()
        return self.sources(scope, expr.args[0])  # type: ignore[attr-defined]

    @staticmethod
    def _floor_of(expr: ast.expr) -> ast.expr | None:
        """x in `max(16, x)`: a value raised to a constant floor."""
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "max" \
                and len(expr.args) == 2 and not expr.keywords:
            consts = [a for a in expr.args if isinstance(a, ast.Constant)]
            rest = [a for a in expr.args if not isinstance(a, ast.Constant)]
            if len(consts) == 1 and len(rest) == 1:
                return rest[0]
        return None

    def _arithmetic(self, scope: HostScope, expr: ast.expr, depth: int = 4) -> bool:
        """Plain arithmetic on names and literals, through the local assignments (`dim0 + pad_x`): a
        rounding of a size, never a clip such as `min(triton.next_power_of_2(V), 64)`, which maps sizes
        that need different work (two V blocks or four) to one key."""
        if isinstance(expr, ast.Constant):
            return True
        if isinstance(expr, ast.Name):
            values = scope.values_of(expr.id)
            if values is None:
                return True  # bound another way (a parameter, an unpacked shape): the size itself
            return bool(depth) and all(self._arithmetic(scope, value, depth - 1) for value in values)
        if isinstance(expr, ast.BinOp):
            return self._arithmetic(scope, expr.left, depth) and self._arithmetic(scope, expr.right, depth)
        if isinstance(expr, ast.UnaryOp):
            return self._arithmetic(scope, expr.operand, depth)
        return False

    def keyed_by_triton(self, name: str) -> bool:
        """Every launch here derives the argument from a tensor's dtype, or from whether a tensor argument is
        None: both already change Triton's own key (it appends the dtype of every tensor argument)."""
        if not self.sites:
            return False
        if self._follows_none_arguments(name):
            return True
        for scope, passed in self.sites:
            value = passed.get(name)
            if value is None:
                return False
            texts = {ast.unparse(v) for v in passed.values()}
            if not (any(self._reads_dtype(e) for e in self._flag_value(scope, value))
                    or self._none_test(scope, value, texts)):
                return False
        return True

    def _follows_none_arguments(self, name: str) -> bool:
        """Every launch passes the flag a literal, and launches that pass it different values also differ in
        which arguments they pass as a literal None (`matmul[grid](a, b, c, None, ..., HAS_INPUT=False)` and
        `matmul[grid](a, b, c, x, ..., HAS_INPUT=True)`): Triton's key tells them apart already."""
        values: dict[frozenset[str], object] = {}
        for index, (_, passed) in enumerate(self.sites):
            value = passed.get(name)
            if not isinstance(value, ast.Constant) or index in self.open:
                return False
            nones = frozenset(k for k, v in passed.items() if isinstance(v, ast.Constant) and v.value is None)
            if values.setdefault(nones, value.value) != value.value:
                return False
        return len(set(values.values())) > 1


def _is_none_check(function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
    """A helper of one argument whose body is `return v is not None` (`exists(v)`, common in model code)."""
    if function is None or len(function.args.args) != 1 or len(function.body) != 1:
        return False
    statement = function.body[0]
    return isinstance(statement, ast.Return) and isinstance(statement.value, ast.Compare) \
        and len(statement.value.ops) == 1 and isinstance(statement.value.ops[0], ast.IsNot) \
        and isinstance(statement.value.left, ast.Name) and statement.value.left.id == function.args.args[0].arg \
        and isinstance(statement.value.comparators[0], ast.Constant) and statement.value.comparators[0].value is None


def _may_be_none(scope: HostScope, expr: ast.expr, seen: frozenset[str] = frozenset()) -> bool:
    """`None`, `x if c else None`, or a local name one of whose assignments is such a value (`seen`: the
    names being followed, so that `x = x if c else None` ends)."""
    if isinstance(expr, ast.Constant):
        return expr.value is None
    if isinstance(expr, ast.IfExp):
        return _may_be_none(scope, expr.body, seen) or _may_be_none(scope, expr.orelse, seen)
    if isinstance(expr, ast.Name) and scope.node is not None and expr.id not in seen:
        return any(value is not None and not isinstance(value, ast.Name)
                   and _may_be_none(scope, value, seen | {expr.id}) for value in scope.values.get(expr.id, []))
    return False


def _chooses(model: ModuleModel, launch: LaunchSite, names: set[str]) -> dict[str, bool] | None:
    """`kernel = a if static else b; kernel[grid](...)` (an if/else assigning it, a pick from a dict or tuple of
    kernels): a launch through a local name that may pick the kernel known here by `names`. None when it
    cannot; else what the choice tells about the launch's own names: in `a if use_label else b`, `use_label`
    is True wherever `a` runs (empty when nothing is known)."""
    callee = launch.node.func.value if isinstance(launch.node.func, ast.Subscript) else None
    if not isinstance(callee, ast.Name) or launch.scope is None:
        return None
    values = HostScope.of(model, launch.scope).values_of(callee.id) or []
    picks = [value for value in values if not names.isdisjoint(choice_candidates(model, value) or ())
             or isinstance(value, (ast.IfExp, ast.BoolOp, ast.Name))
             and any(isinstance(n, ast.Name) and model.qualify(n) in names for n in walk(value))]
    if not picks:
        return None
    if len(values) != 1 or not isinstance(picks[0], ast.IfExp):
        return {}
    choice = picks[0]
    arm = [side for side in (True, False) if model.qualify(choice.body if side else choice.orelse) in names]
    test, negated = choice.test, False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, True
    if len(arm) != 1 or not isinstance(test, ast.Name):
        return {}
    return {test.id: arm[0] != negated}


def _known(value: ast.expr, facts: dict[str, bool]) -> ast.expr:
    """A launch argument with what the kernel choice tells: `USE_LABEL=use_label` is True for the kernel the
    launch runs only when use_label is."""
    if isinstance(value, ast.Name) and value.id in facts:
        return ast.copy_location(ast.Constant(facts[value.id]), value)
    return value


# ---- the condition and the fixer -------------------------------------------------------------------------
def _kernel_of(model: ModuleModel, call: ast.Call) -> JitFunction | None:
    return next((f for f in model.functions if f.autotune is not None and f.autotune.node is call), None)


def _has_keyed_autotune(model: ModuleModel, target: int | None) -> bool:
    return any(f.autotune is not None and f.autotune.key is not None for f in model.functions)


@condition("autotune-key-omissions", params={"ignore": ParamSpec("list", required=False)},
           provides=("key", "missing", "omitted"), applies=_has_keyed_autotune)
def autotune_key_omissions(ctx: MatchContext, ignore: list[str] | None = None) -> Verdict | None:
    """A @triton.autotune whose literal `key` leaves out a kernel argument that sets a loop trip count, the
    tiled extent, a mask along a tuned block, or a constexpr flag that selects a code path."""
    call = ctx.ast_node(types=(ast.Call,))
    if not isinstance(call, ast.Call):
        return None
    kernel = _kernel_of(ctx.model, call)
    if kernel is None or kernel.autotune is None or kernel.autotune.key is None:
        return None
    autotune = kernel.autotune
    if autotune.one_config:
        return None  # nothing to tune
    launches = LaunchValues(ctx.model, kernel, ctx.project)
    # With configs that cannot be read, the block sizes are presumed tuned, except one that every launch passes:
    # configs cannot set what a launch passes (Triton refuses the conflict, see TL004). A block every config sets
    # to one value is not tuned: what runs along it is the same in every config.
    tuned = {name for name in autotune.tuned_meta if autotune.varies(name)} if autotune.configs is not None else {
        name for name in kernel.constexprs if is_block_name(name) and name not in kernel.heuristics} - launches.always_passed()
    uses = KernelUses(ctx.model, kernel, tuned)
    omissions = Omissions(ctx, kernel, uses, call, ignore or [], launches)
    missing = [(p.name, uses.reasons[p.name]) for p in kernel.params
               if p.name in uses.reasons and omissions.covered(p) is None]
    if not missing:
        return None
    start, end = ctx.file.span_of(call)  # the whole decorator call: the fix edits its key list
    names = [name for name, _ in missing]
    return Verdict(
        vars={
            "key": _key_text(ctx, autotune),
            "missing": ", ".join(names),
            "omitted": _some(names),
        },
        span=(start, end),
        data={"missing": [name for name, _ in missing], "autotune": autotune},
        # Without a launch in view the values the kernel gets are unknown (a flag every caller passes as one
        # constant, a size the caller buckets into the key): on unfamiliar code about half of such findings
        # were wrong, against one in eight with a launch in view (docs/precision.md), so they are info.
        severity=None if omissions.launches.sites else "info",
        notes=[f"{reason.describe(name)}." for name, reason in missing] + _elsewhere_notes(omissions.launches)
        + ([] if omissions.launches.sites else [
            "No launch of this kernel in the project: what its callers pass was not seen, so this is info."])
        + [f"Evidence: {evidence.measured_phrase('TL006', 'slower')}."],
    )


def _elsewhere_notes(launches: LaunchValues) -> list[str]:
    """`Judged with the launch at ops.py:12.` when launches in other modules were read."""
    if not launches.elsewhere:
        return []
    shown = ", ".join(f"{path}:{line}" for path, line in launches.elsewhere[:2])
    more = f" and {len(launches.elsewhere) - 2} more" if len(launches.elsewhere) > 2 else ""
    return [f"Judged with the launch{'es' if len(launches.elsewhere) > 1 else ''} at {shown}{more}."]


def _some(names: list[str], width: int = 40) -> str:
    """The names that fit in `width` characters, then how many more (the notes list them all)."""
    shown = [names[0]]
    for name in names[1:]:
        if len(", ".join([*shown, name])) > width:
            return f"{', '.join(shown)} and {len(names) - len(shown)} more"
        shown.append(name)
    return ", ".join(shown)


class Omissions:
    """Why an argument that drives the work may still be left out of the key."""

    def __init__(self, ctx: MatchContext, kernel: JitFunction, uses: KernelUses, call: ast.Call, ignore: list[str],
                 launches: LaunchValues):
        autotune: Autotune = kernel.autotune  # type: ignore[assignment]
        self.ctx = ctx
        self.key = autotune.key or []
        self.configs_known = autotune.configs is not None
        self.uses = uses
        # Configs that cannot be evaluated still show, in their syntax, the names they set.
        written = written_meta(ctx.model, autotune.configs_node) if autotune.configs is None and autotune.configs_node else set()
        self.skip = (set(self.key) | autotune.tuned_meta | written | set(kernel.heuristics) | set(ignore)
                     | not_specialized(ctx.model, kernel) | {"num_warps", "num_stages", "num_ctas"})
        self.launches = launches
        self.first_line = min([call.lineno] + [d.lineno for d in kernel.node.decorator_list])  # type: ignore[union-attr]
        self.last_line = call.end_lineno or call.lineno
        key = next((kw.value for kw in call.keywords if kw.arg == "key"), None)
        self.key_lines = (key.lineno, key.end_lineno or key.lineno) if key is not None else None
        self.parameters = frozenset(param.name for param in kernel.params)
        self._follows: dict[str, bool | None] = {}
        self.configs_docstring = _factory_docstring(ctx.model, call)
        self.pinned = pinned_constexprs(ctx.model, kernel)
        # Tuning num_warps alone: no meta-parameter the kernel reads differs (a block size the configs set and the
        # body never names changes nothing compiled), nor num_stages.
        configs = autotune.configs or []
        varied = {n for n in autotune.tuned_meta if autotune.varies(n)}
        if varied and kernel.node is not None:
            varied &= {n.id for statement in kernel.node.body for n in walk(statement)
                       if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        self.warps_only = bool(configs) and not varied \
            and len({repr(c.num_stages) for c in configs}) == 1 and len({repr(c.num_warps) for c in configs}) > 1

    def covered(self, param: Param) -> KeyExemption | None:
        """The first exemption that lets the key leave `param` out, if any."""
        return next((exemption for exemption in EXEMPTIONS if exemption.applies(self, param)), None)

    def follows(self, param: Param) -> bool | None:
        """Whether every launch in view passes one constant, or a value computed from keyed arguments (None:
        no launch shows it). A default naming a module-level or imported value counts as a constant."""
        if param.name not in self._follows:
            default_value = param.default_value
            if default_value is None and param.default is not None and self._process_constant(param.default):
                default_value = param.default  # `USE_GATHER: tl.constexpr = IS_GATHER_SUPPORTED`
            self._follows[param.name] = self.launches.follows(param.name, self.key, default_value)
        return self._follows[param.name]

    def none_tested(self, param: Param) -> bool:
        guarded = self.uses.optional_guards.get(param.name) if self.uses.reasons[param.name].kind == "mode" else None
        follows = self.follows(param)
        return bool(guarded) and (follows is None or param.name in self.uses.truth_guards
                                  and self.launches.tracks_none(param.name, guarded))  # type: ignore[arg-type]

    def _process_constant(self, text: str) -> bool:
        """A default that names a module-level or imported value: the same on every call of a process."""
        try:
            expr = ast.parse(text, mode="eval").body
        except SyntaxError:
            return False
        model = self.ctx.model
        if isinstance(expr, ast.Name):
            return expr.id in model.local_names or expr.id in model.imports
        return isinstance(expr, ast.Attribute) and model.qualify(expr) is not None


# A reason the key may leave out an argument that drives the work; the rule doc lists every entry.
KeyExemption = Exemption[Callable[[Omissions, Param], bool]]
EXEMPTIONS: tuple[KeyExemption, ...] = (
    Exemption("same-as-keyed", "an argument named like a keyed one up to case and underscores (N_STREAM beside a "
              "keyed n_stream): the same size passed again", lambda o, p: any(
                  name_words(entry) == name_words(p.name) for entry in o.key)),
    Exemption("tuned-or-derived", "a meta-parameter the configs set (where they cannot be evaluated, a string key "
              "of a dict in their expression or in the module functions and values it names), a "
              "`@triton.heuristics` output, an argument in `do_not_specialize` or in the `autotune-key-ignore` "
              "option, and num_warps/num_stages/num_ctas",
              lambda o, p: p.name in o.skip),
    Exemption("dtype-or-device", "a name that says it is a dtype or a device property (IS_FP8, NUM_SMS): Triton's "
              "own key holds every tensor argument's dtype, and the device does not change within a process",
              lambda o, p: bool(set(name_words(p.name)) & (DTYPE_WORDS | DEVICE_WORDS))),
    Exemption("process-topology", "a distributed topology value (rank, world size, number of ranks or nodes): "
              "one value for the life of a process", lambda o, p: bool(set(name_words(p.name)) & TOPOLOGY_WORDS)),
    Exemption("keyed-by-triton", "a flag every launch computes from a tensor's dtype (`x.dtype == torch.float8`), "
              "which Triton's key already sees", lambda o, p: o.launches.keyed_by_triton(p.name)),
    Exemption("never-passed", "an argument without a default that no launch in view passes: the configs, "
              "unknown here, supply it", lambda o, p: p.default is None and o.launches.never_passed(p.name)),
    Exemption("one-value-per-process", "an argument every launch in view passes as one constant, a module-level "
              "or imported value, a constant an autograd Function's `forward` saved on `ctx`, or a value computed "
              "from what it passes for keyed arguments (`num_blocks=triton.cdiv(N, 64)` with N keyed) or a value the "
              "launching function asserts equal to a constant (`assert n == 1`), also where "
              "the launching function passes its own parameters on (also through a local copy, `BC = "
              "sub_chunk_size`) and every call of it in the project computes them so (`RMSNorm.apply(x, n_cols, "
              "min(4096, next_power_of_2(n_cols)))`; a public function's callers in the modules that import it "
              "count, read only where the run holds those modules); a default "
              "that names a module-level or imported value counts for launches that leave it out",
              lambda o, p: bool(o.follows(p))),
    Exemption("unseen-tile-or-knob", "a tile size, or with configs that cannot be read a tuning knob (SPLIT_K, "
              "GROUP_SIZE_M), that no launch in view passes: presumably tuned or derived", lambda o, p:
              o.follows(p) is None and (is_block_name(p.name) or not o.configs_known and p.name.lower() in TUNING_KNOBS)),
    Exemption("none-test", "a code-path flag that guards the only uses of a tensor argument, when no launch is "
              "visible or every launch passes it together with a value that is None on some path (`bias is not "
              "None`, also through a module helper whose body is `return v is not None`, `exists(bias)`): "
              "Triton's key sees whether a tensor argument is None", lambda o, p: o.none_tested(p)),
    Exemption("bucketed", "an argument a bucketed key entry covers (CACHE_KEY_SEQLEN_Q for seqlen_q, a key entry "
              "every launch computes from it with a bucket, such as `bucket_M = get_bucket_m(B * S)` or `lq_key = "
              "bucket_seqlen(max_lq)`, a size rounded up to a power of two, `BLOCK_H = max(16, "
              "triton.next_power_of_2(H))`, or one computed from it "
              "alone by arithmetic, such as a padded size `out_x = dim0 + pad`)", lambda o, p:
              bool(bucketed_by(p.name, o.key) or o.launches.bucketed_in(p.name, o.key))),
    Exemption("warps-only-trip-count", "an argument whose only use is a loop's trip count, under configs that "
              "differ in num_warps alone (no block size the kernel reads, one num_stages), when every launch in "
              "view computes its grid from other values: each config's time scales alike with the count, so the "
              "one best at one count is best at all (1.00x on an H100, docs/precision/bench/tl006_warps_only_loop.py)",
              lambda o, p: o.warps_only and o.uses.kinds.get(p.name) == {"loop"} and o.launches.off_the_grid(p.name)),
    Exemption("pinned", "a constexpr the kernel pins to one value (`tl.static_assert(n == 4)`): it compiles "
              "for no other", lambda o, p: p.name in o.pinned),
    Exemption("explained", "an argument a note about the key explains: a comment on the autotune call's lines, "
              "the comment block right above them, or the docstring of the function that builds the configs; a "
              "comment on the `key=` argument's own lines, or in the block right above it, needs not say \"key\", and "
              "explains the arguments it names, or every one where it names none",
              lambda o, p: bool(explaining_comment(o.ctx.model, o.ctx.file.text, o.first_line, o.last_line, p.name,
                                                   o.configs_docstring, o.key_lines, o.parameters))),
)


def _asserted_constant(scope: HostScope, name: str) -> ast.Constant | None:
    """The constant a host function asserts a name equal to in its own body (`assert n == 1`, not under an
    `if`), when the function binds the name once: every launch after it passes that value."""
    bound = scope.values.get(name) if scope.node is not None else None
    if bound is None or len(bound) != 1:
        return None
    for stmt in scope.node.body:  # type: ignore[union-attr]
        test = stmt.test if isinstance(stmt, ast.Assert) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            sides = [test.left, test.comparators[0]]
            if any(isinstance(side, ast.Name) and side.id == name for side in sides):
                constant = next((side for side in sides if isinstance(side, ast.Constant)), None)
                if constant is not None:
                    return constant
    return None


def pinned_constexprs(model: ModuleModel, kernel: JitFunction) -> set[str]:
    """Constexpr parameters a `tl.static_assert(NAME == constant)` in the kernel body pins to one value."""
    pinned = set()
    for node in walk(kernel.node) if kernel.node is not None else ():
        if isinstance(node, ast.Call) and node.args and model.qualify(node.func) == f"{TL}.static_assert":
            test = node.args[0]
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                sides = [test.left, test.comparators[0]]
                names = [side.id for side in sides if isinstance(side, ast.Name)]
                if len(names) == 1 and any(isinstance(side, ast.Constant) for side in sides):
                    pinned.add(names[0])
    return pinned & set(kernel.constexprs)


def _factory_docstring(model: ModuleModel, call: ast.Call) -> str | None:
    """The docstring of the module function whose call builds the configs (`configs=_candidate_configs()`)."""
    configs = next((kw.value for kw in call.keywords if kw.arg == "configs"), call.args[0] if call.args else None)
    if not (isinstance(configs, ast.Call) and isinstance(configs.func, ast.Name)):
        return None
    definition = next((s for s in model.tree.body if isinstance(s, ast.FunctionDef) and s.name == configs.func.id), None)
    return ast.get_docstring(definition) if definition is not None else None


def _key_text(ctx: MatchContext, autotune: Autotune) -> str:
    """`["M"]`, or `KEYS = ["M"]` when the key names a module-level list."""
    node = autotune.key_node
    text = _short(ctx.file.text_of(node), 80)  # type: ignore[arg-type]
    if isinstance(node, ast.Name) and node.id in ctx.model.assignments:
        text += " = " + _short(ctx.file.text_of(ctx.model.assignments[node.id]), 80)
    return text


@fixer("autotune-key-append")
def autotune_key_append(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Append the missing names to the key list, keeping its quotes, trailing comma and line layout."""
    autotune: Autotune = verdict.data["autotune"]
    node = autotune.key_node
    if isinstance(node, ast.Name):
        reads = sum(isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Load) for n in walk(ctx.model.tree))
        if reads != 1:
            verdict.notes.append(f"No fix offered: the key list `{node.id}` is shared by other code; extend it there.")
            return None
        node = ctx.model.assignments.get(node.id)
        if isinstance(node, (ast.List, ast.Tuple)):
            verdict.related.append(ctx.file.span_of(node))  # the module-level key list the fix extends
    if not isinstance(node, (ast.List, ast.Tuple)) or not ctx.file.text_of(node)[:1] in "[(":
        return None
    return [append_to_list(ctx.file, node, verdict.data["missing"])]
