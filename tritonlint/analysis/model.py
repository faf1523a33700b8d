"""The kernel model: what a module says about its Triton kernels, built once from Python's ast.

Rules query this model instead of re-parsing: import aliases, @triton.jit functions with their parameters
and constexprs, autotune configs and keys, heuristics, module constants and the launch sites
`kernel[grid](...)`, each resolved through the module's own names and imports (never by bare name across a
tree). Kernel summaries are plain data so worker processes can hand them to each other.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from tritonlint.analysis.configs import ConfigInterpreter
from tritonlint.analysis.consteval import Binding, Evaluator, literal_value
from tritonlint.analysis.triton_names import TL
from tritonlint.walk import children, walk

if TYPE_CHECKING:
    from tritonlint.analysis.project import Namespaces

T = TypeVar("T")

# Re-exports and old homes of the names rules care about, mapped to one spelling.
_CANONICAL_PREFIXES = (
    ("triton.runtime.autotuner.", "triton."),
    ("triton.runtime.jit.", "triton."),
    ("triton.runtime.", "triton."),
    ("triton.language.core.", "triton.language."),
    ("triton.language.standard.", "triton.language."),
)
# Files that use these names without binding them (star imports, shared preambles) mean Triton by them.
_CONVENTIONAL = {"tl": "triton.language", "triton": "triton"}
_SHIM_EXPORTS = frozenset({"jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2"})
# A recurrent state or its cache (`cache`, `conv_state`, `ssm_states_ptr`), one slot per sequence; not a KV
# cache, whose slots are tokens.
_STATE_WORDS = frozenset({"cache", "caches", "state", "states"})
_TOKEN_CACHE_WORDS = frozenset({"k", "v", "kv", "key", "keys", "value", "values", "kvcache", "paged", "page", "block"})


# Calls whose arguments make a tile: a constexpr there is a tile size, and specializing on it is the point.
_TILE_CALLS = frozenset(f"{TL}.{n}" for n in (
    "arange", "zeros", "full", "reshape", "view", "broadcast_to", "static_range", "make_block_ptr",
    "make_tensor_descriptor", "expand_dims", "static_assert", "split", "join", "permute", "trans"))
# Not a descriptor's `load` / `store`: their offsets are runtime values (`desc.load([off_hz * N_CTX, 0])`).
_TILE_METHODS = frozenset({"reshape", "view", "broadcast_to", "permute", "trans"})
# Block pointers and descriptors: only the block shape is a tile; the tensor's shape, strides and offsets are
# runtime values (`shape=(N_CTX, D)` takes a sequence length that need not be a constexpr).
_BLOCK_SHAPE_AT = {f"{TL}.make_block_ptr": 4, f"{TL}.make_tensor_descriptor": 3}


def _is_state_name(name: str) -> bool:
    words = set(name.lower().split("_"))
    return bool(words & _STATE_WORDS) and not words & _TOKEN_CACHE_WORDS

JIT = "triton.jit"
AUTOTUNE = "triton.autotune"
HEURISTICS = "triton.heuristics"
CONFIG = "triton.Config"
CONSTEXPR = "triton.language.constexpr"
PROGRAM_ID = "triton.language.program_id"


def program_id_axis(call: ast.Call) -> int | None:
    """The axis of a `tl.program_id(...)` call written as an integer literal (`axis=` too), else None."""
    axis = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "axis"), None)
    return axis.value if isinstance(axis, ast.Constant) and type(axis.value) is int else None


# Calls that return the kernel they are given, launchable the same way (`wrap_triton(kernel)[grid](...)`).
KERNEL_WRAPPERS = frozenset({"torch.library.wrap_triton", "torch.library.capture_triton",
                             "torch._library.capture_triton", "torch._library.wrap_triton",
                             "torch._library.triton.capture_triton", "torch._library.triton.wrap_triton",
                             "torch._higher_order_ops.triton_kernel_wrap.capture_triton"})
_MAX_EXPANDED_CONFIGS = 1024
# Text a launch `kernel[grid](...)` cannot do without: the subscript's `]`, then the call's `(`, with only
# blanks, closing parentheses (`(kernel[grid])(...)`), whole comments or line continuations between them
# (a comment runs to its line's end, which keeps the search linear).
LAUNCH_TEXT = re.compile(r"\](?:[\s)\\]|#[^\n]*\n)*\(")
# Text of the other launch forms: `kernel.run(..., grid=g, warmup=False)`, `functools.partial(kernel[g], ...)`.
OTHER_LAUNCH_TEXT = re.compile(r"\.run\s*\(|\bpartial\s*\(")
PARTIAL = "functools.partial"


def canonical(name: str | None) -> str | None:
    if name is None:
        return None
    for old, new in _CANONICAL_PREFIXES:
        if name.startswith(old):
            return new + name[len(old):]
    return name


@dataclass
class Param:
    """A parameter of a jit function."""
    name: str
    is_constexpr: bool
    annotation: str | None = None
    default: str | None = None  # source text
    default_value: object | None = None  # a literal or folded constant, else None


@dataclass
class TuneConfig:
    """One `triton.Config` of an autotune list, as far as its values are constants."""
    index: int  # position in the configs list, 0-based
    meta: dict[str, object | None]  # meta-parameters; None where the value is not a constant
    num_warps: object | None = None
    num_stages: object | None = None
    has_pre_hook: bool = False
    line: int = 0
    pre_hook_node: ast.FunctionDef | None = None  # see analysis/configs.py ConfigValue


@dataclass
class Autotune:
    """A function's `@triton.autotune`: its configs, key and the other arguments rules read."""
    line: int
    configs: list[TuneConfig] | None  # None: not statically known
    key: list[str] | None  # None: not a literal list
    reset_to_zero: list[str] = field(default_factory=list)
    restore_value: list[str] = field(default_factory=list)
    has_prune: bool = False
    keywords: tuple[str, ...] = ()
    node: ast.Call | None = field(default=None, repr=False, compare=False)
    key_node: ast.expr | None = field(default=None, repr=False, compare=False)
    configs_node: ast.expr | None = field(default=None, repr=False, compare=False)

    @property
    def one_config(self) -> bool:
        """Exactly one config, known statically: Triton runs it without benchmarking and never reads the key."""
        return self.configs is not None and len(self.configs) < 2

    @property
    def tuned_meta(self) -> set[str]:
        """Meta-parameters that some config sets."""
        return {name for cfg in self.configs or () for name in cfg.meta}

    def varies(self, name: str) -> bool:
        """Whether the configs give `name` more than one value (or a non-constant one)."""
        values = {repr(cfg.meta.get(name)) for cfg in self.configs or ()}
        return len(values) > 1 or "None" in values


@dataclass
class JitFunction:
    """A `@triton.jit` function: its parameters, decorators and what the rules need of its body."""
    name: str
    qualname: str  # module.name for module-level functions; module.<locals>.name otherwise
    path: str
    line: int  # the `def` line
    params: list[Param]
    autotune: Autotune | None = None
    heuristics: dict[str, str] = field(default_factory=dict)  # name -> source of the lambda
    decorators: list[str] = field(default_factory=list)
    # Constexpr parameters that scale tl.program_id(axis) (`pid_m * BLOCK_M`): the tile of each launch axis.
    tiles: dict[int, tuple[str, ...]] = field(default_factory=dict)  # set for autotuned kernels only
    # Launch axes whose tl.program_id indexes a recurrent state the kernel loads and stores in place (a
    # parameter named as a cache or state, `cache + i_n * D * W`): one program per sequence on that axis.
    state_axes: tuple[int, ...] = ()
    # Constexpr parameters the body uses as a tile size (tl.arange, a shape, a block shape) or hands to a helper.
    tile_sizes: tuple[str, ...] = ()
    # Those, and the constexprs a tile size is computed from (`C = tl.cdiv(T, BLOCK)` then `tl.zeros([C])`): each
    # needs a value at compile time.
    shape_inputs: tuple[str, ...] = ()
    node: ast.FunctionDef | None = field(default=None, repr=False, compare=False)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def constexprs(self) -> list[str]:
        return [p.name for p in self.params if p.is_constexpr]

    def summary(self) -> JitFunction:
        """A copy without syntax-tree references, for other processes."""
        autotune = self.autotune and dataclasses.replace(self.autotune, node=None, key_node=None, configs_node=None)
        return dataclasses.replace(self, node=None, autotune=autotune)


@dataclass
class LaunchArg:
    """One argument of a kernel launch."""
    name: str | None  # keyword name; None for a positional (`*args` too, its node is a Starred); "**" for `**kwargs`
    text: str
    value: object | None  # literal value, else None
    node: ast.expr | None = field(default=None, repr=False, compare=False)
    keyword: ast.keyword | None = field(default=None, repr=False, compare=False)


@dataclass
class LaunchSite:
    """A kernel launch, `kernel[grid](...)`, with its arguments."""
    target: str | None  # qualified name of the launched object
    callee_text: str
    line: int
    args: list[LaunchArg]
    grid: ast.expr = field(repr=False, compare=False)
    node: ast.Call = field(repr=False, compare=False)
    scope: ast.AST | None = field(default=None, repr=False, compare=False)  # enclosing function, if any

    def keyword(self, name: str) -> LaunchArg | None:
        return next((a for a in self.args if a.name == name), None)


class ModuleModel:
    """Everything a module says about Triton, plus name resolution through its imports."""

    def __init__(self, tree: ast.Module, module: str, path: str, is_package: bool = False,
                 text: str | None = None, imported: Callable[[str, str], ModuleModel | None] | None = None,
                 namespaces: Namespaces | None = None) -> None:
        """`text`, the source of `tree`, lets the launch search skip the lines that cannot hold a launch;
        `imported(module, name)` gives the model of another module of the project, for names imported from it;
        `namespaces` finds the project's modules imported as namespace packages."""
        self.imported = imported
        self.namespaces = namespaces
        self.dotted_imports: set[str] = set()  # dotted names imported, as written, where namespaces are known
        self.beside_imports: set[str] = set()  # names imported, as written, by a module Namespaces renamed
        self.star_modules: list[str] = []  # modules imported with `from m import *`, in order
        self._star_names: dict[str, str | None] = {}
        self._reexports: dict[str, str] = {}  # see _reexported
        self.tree = tree
        self.module = module
        self.path = path
        self.package = module if is_package else module.rpartition(".")[0]
        self.imports: dict[str, str] = {}
        self.local_names: set[str] = set()
        self.assignments: dict[str, ast.expr] = {}  # module-level single assignments
        self.constants: dict[str, Binding] = {}
        self.functions: list[JitFunction] = []
        self.launches: list[LaunchSite] = []
        # What checks derive from this module and ask for again at every match (a host scope, the calls
        # that hand a kernel over): computed once per module, keyed by (what, node id).
        self.memo: dict[tuple[Any, ...], Any] = {}  # see memoized
        self.text = text
        self._statements = _Statements(tree, None if text is None else _launch_lines(text))
        self._collect_module_names()
        self._collect_imports()
        self._collect_constants()
        self._collect_functions()
        self._collect_launches()

    # ---- names -------------------------------------------------------------------------------------
    def _collect_module_names(self) -> None:
        counts: dict[str, int] = {}
        for stmt in self.tree.body:
            for name, value in _bound_names(stmt):
                self.local_names.add(name)
                counts[name] = counts.get(name, 0) + 1
                if value is not None:
                    self.assignments[name] = value
        for name, count in counts.items():
            if count > 1:
                self.assignments.pop(name, None)  # rebound: not a constant

    def _collect_imports(self) -> None:
        for node in self._statements.imports:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.imports.setdefault(alias.asname, self._module_of(alias.name))
                    else:
                        head = alias.name.split(".")[0]
                        self.imports.setdefault(head, self._module_of(head))
            elif isinstance(node, ast.ImportFrom):
                base = self.absolute_module(node)
                if base is None:
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        self.star_modules.append(self._module_of(base))
                    else:
                        self.imports.setdefault(alias.asname or alias.name, self._module_of(f"{base}.{alias.name}"))
        # A package's re-export of Triton under its conventional name (`from vllm.triton_utils import tl,
        # triton`) is Triton itself, and so are Triton's decorators and helpers imported from that module
        # under their own names (`from gym.tri import tl, jit`): a numba or jax `jit` comes without a `tl`.
        shims = set()
        for name, target in self.imports.items():
            if name in _CONVENTIONAL and target.endswith(f".{name}") and not target.startswith("triton."):
                self.imports[name] = _CONVENTIONAL[name]
                shims.add(target.rpartition(".")[0])
        for name, target in self.imports.items():
            module, _, attribute = target.rpartition(".")
            if module in shims and attribute == name and name in _SHIM_EXPORTS:
                self.imports[name] = f"triton.{name}"
        # The optional-import idiom (`_triton = None`, then `_triton = triton` in a `try`): the name is the module.
        for name, values in _optional_aliases(self.tree).items():
            modules = {v.id for v in values if isinstance(v, ast.Name)}
            if name not in self.imports and len(modules) == 1 and (module := modules.pop()) in self.imports:
                self.imports[name] = self.imports[module]

    def _module_of(self, imported: str) -> str:
        """An imported dotted name with a project module's name as a namespace package replaced by the module's
        own name, or a module beside this one named with its folder (Namespaces)."""
        if self.namespaces is None:
            return imported
        if self.module in self.namespaces.separated:
            self.beside_imports.add(imported)
            found = self.namespaces.beside(self.module, imported)
            if found is not None:
                return found
        if "." not in imported or not self.namespaces.may_name(imported):
            return imported
        self.dotted_imports.add(imported)
        return self.namespaces.module_of(imported) or imported

    def _star_name(self, name: str) -> str | None:
        """The dotted name a `from m import *` of a project module binds `name` to (m defines it), read through
        `imported` (which records the dependency); None without such an import or a project to read."""
        if not self.star_modules or self.imported is None:
            return None
        if name not in self._star_names:
            found = None
            for module in reversed(self.star_modules):  # the last import binds the name
                other = self.imported(module, name)
                if other is not None and name in other.local_names:
                    found = f"{module}.{name}"
                    break
            self._star_names[name] = found
        return self._star_names[name]

    def _reexported(self, dotted: str) -> str:
        """`pkg.compat.jit` where the project's `pkg/compat.py` imports `jit` from Triton is `triton.jit`; one
        level deep, as the imported module's own imports are not followed."""
        dotted = canonical(dotted) or dotted
        if self.imported is None or dotted.startswith(("triton.", "torch.")):
            return dotted
        if dotted not in self._reexports:
            module, _, name = dotted.rpartition(".")
            other = self.imported(module, name) if module else None
            found = other.qualify(ast.Name(name)) if other is not None and name in other.imports else None
            # Only Triton's own names: the project's kernels are found through re-exports by the launch index.
            self._reexports[dotted] = found if found is not None and found.startswith("triton.") else dotted
        return self._reexports[dotted]

    def absolute_module(self, node: ast.ImportFrom) -> str | None:
        """The module an import names, a relative one resolved against this module's package (None where the
        package is too shallow for it)."""
        if not node.level:
            return node.module
        parts = self.package.split(".") if self.package else []
        if node.level - 1 > len(parts):
            return None
        parts = parts[: len(parts) - (node.level - 1)]
        if node.module:
            parts.append(node.module)
        return ".".join(parts) or None

    def qualify(self, node: ast.expr | None) -> str | None:
        """Dotted, canonical name of a Name/Attribute chain: `tl.static_range` -> triton.language.static_range."""
        if isinstance(node, ast.Name):
            if node.id in self.imports:
                return self._reexported(self.imports[node.id])
            if node.id in self.local_names:
                return f"{self.module}.{node.id}"
            return self._star_name(node.id) or _CONVENTIONAL.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualify(node.value)
            return canonical(f"{base}.{node.attr}") if base else None
        return None

    def qualify_dotted(self, dotted: str) -> str | None:
        """qualify() for the text of a Name/Attribute chain, `tl.static_range`."""
        head, *attributes = dotted.split(".")
        base = self.qualify(ast.Name(head))
        for attribute in attributes:
            if not base:
                return None
            base = canonical(f"{base}.{attribute}")
        return base

    def evaluator(self, env: dict[str, Binding] | None = None) -> Evaluator:
        scope = dict(self.constants)
        scope.update(env or {})
        return Evaluator(scope, self.qualify)

    # ---- module constants ----------------------------------------------------------------------------
    def _collect_constants(self) -> None:
        for name, value in self.assignments.items():
            evaluated = Evaluator(self.constants, self.qualify).evaluate(value)
            if evaluated is not None:
                self.constants[name] = Binding(evaluated.value, f"module constant at line {value.lineno}")
            else:
                literal = literal_value(value)
                if literal is not None:
                    self.constants[name] = Binding(literal, f"module constant at line {value.lineno}")

    # ---- jit functions -------------------------------------------------------------------------------
    def _collect_functions(self) -> None:
        for node, nested in self._statements.definitions:
            function = self._jit_function(node, nested)
            if function is not None:
                self.functions.append(function)
        self._collect_wrapped_assignments()

    def _decorator_name(self, decorator: ast.expr) -> str | None:
        callee = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self.qualify(callee)

    def _jit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, nested: bool) -> JitFunction | None:
        names = [self._decorator_name(d) for d in node.decorator_list]
        if JIT not in names:
            return None
        function = JitFunction(
            name=node.name,
            qualname=f"{self.module}.<locals>.{node.name}" if nested else f"{self.module}.{node.name}",
            path=self.path,
            line=node.lineno,
            params=self._params(node.args),
            decorators=[n or "?" for n in names],
            node=node,  # type: ignore[arg-type]
        )
        for decorator, name in zip(node.decorator_list, names):
            if name == AUTOTUNE and isinstance(decorator, ast.Call):
                function.autotune = self._autotune(decorator)
            elif name == HEURISTICS and isinstance(decorator, ast.Call):
                function.heuristics.update(self._heuristics(decorator))
            elif isinstance(decorator, ast.Name) and name == f"{self.module}.{decorator.id}" \
                    and (wrapping := self._autotune_factory(decorator.id)) is not None:  # a decorator of this module
                function.autotune = self._autotune(wrapping)
        if function.autotune is not None:  # only launches of autotuned kernels ask which axes tile what
            function.tiles = self._program_tiles(node, set(function.constexprs))
        function.tile_sizes, function.shape_inputs = self._tile_sizes(node, set(function.constexprs))
        states = [p.name for p in function.params if _is_state_name(p.name)]
        if states:
            function.state_axes = self._state_axes(node, states)
        return function

    def _autotune_factory(self, name: str) -> ast.Call | None:
        """The `triton.autotune(...)` call of a decorator defined in the module that wraps what it is handed,
        `def _autotune(fn): return triton.autotune(configs=..., key=[...])(fn)` (other returns hand the function
        back unchanged: `if os.environ.get("TRITON_INTERPRET") == "1": return fn`)."""
        definition = next((n for n in self.tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if definition is None or len(definition.args.args) != 1 or definition.decorator_list:
            return None
        param = definition.args.args[0].arg
        found = None
        for node in ast.walk(definition):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not definition:
                return None  # a decorator built in layers: not followed
            if not isinstance(node, ast.Return):
                continue
            value = node.value
            if isinstance(value, ast.Name) and value.id == param:
                continue
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Call) and len(value.args) == 1
                    and isinstance(value.args[0], ast.Name) and value.args[0].id == param
                    and self.qualify(value.func.func) == AUTOTUNE and found is None):
                return None
            found = value.func
        return found

    def _collect_wrapped_assignments(self) -> None:
        """`kernel = triton.autotune(...)(triton.jit(_kernel))` and `kernel = triton.jit(f)`."""
        by_name = {f.name: f for f in self.functions if ".<locals>." not in f.qualname}
        defs = {n.name: n for n in self.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for name, value in self.assignments.items():
            wrappers: list[ast.Call] = []
            while isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
                callee = value.func
                wrappers.append(callee if isinstance(callee, ast.Call) else value)
                value = value.args[0]
            if not wrappers or not isinstance(value, ast.Name):
                continue
            names = [self._decorator_name(w) for w in wrappers]
            base = by_name.get(value.id)
            if base is None and JIT in names and value.id in defs:
                base = JitFunction(value.id, f"{self.module}.{value.id}", self.path, defs[value.id].lineno,
                                   self._params(defs[value.id].args), node=defs[value.id])  # type: ignore[arg-type]
            if base is None:
                continue
            function = dataclasses.replace(base, name=name, qualname=f"{self.module}.{name}")
            if AUTOTUNE in names and not function.tiles and function.node is not None:
                function.tiles = self._program_tiles(function.node, set(function.constexprs))
            for wrapper, wrapper_name in zip(wrappers, names):
                if wrapper_name == AUTOTUNE and isinstance(wrapper, ast.Call):
                    function.autotune = self._autotune(wrapper)
                elif wrapper_name == HEURISTICS and isinstance(wrapper, ast.Call):
                    function.heuristics = {**function.heuristics, **self._heuristics(wrapper)}
            self.functions.append(function)

    def _params(self, args: ast.arguments) -> list[Param]:
        positional = args.posonlyargs + args.args
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
        params = []
        for arg, default in pairs:
            value = None
            if default is not None:
                evaluated = self.evaluator().evaluate(default)
                value = evaluated.value if evaluated else literal_value(default)
            params.append(Param(
                name=arg.arg,
                is_constexpr=self._is_constexpr(arg.annotation),
                annotation=_unparse(arg.annotation) if arg.annotation else None,
                default=_unparse(default) if default is not None else None,
                default_value=value,
            ))
        return params

    def _program_tiles(self, node: ast.FunctionDef | ast.AsyncFunctionDef, constexprs: set[str]) -> dict[int, tuple[str, ...]]:
        """For each launch axis, the constexpr parameters multiplied by tl.program_id(axis) or by a variable
        derived from it (`pid_m = pid // n`, `off_m = pid_m * BLOCK_M`)."""
        def reads(expr: ast.AST) -> tuple[frozenset[str], frozenset[int]]:
            """The names an expression reads and the axes of the tl.program_id calls in it, found once: the
            fixpoint below asks about each assignment again on every pass."""
            names: set[str] = set()
            axes: set[int] = set()
            for sub in walk(expr):
                if isinstance(sub, ast.Name):
                    names.add(sub.id)
                elif isinstance(sub, ast.Call) and self.qualify(sub.func) == PROGRAM_ID:
                    number = program_id_axis(sub)
                    if number is not None:
                        axes.add(number)
            return frozenset(names), frozenset(axes)

        def axes_of(read: tuple[frozenset[str], frozenset[int]]) -> set[int]:
            names, axes = read
            return set(axes.union(*(derived[name] for name in names if name in derived)))

        derived: dict[str, set[int]] = {}
        assignments = []
        for n in walk(node):
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and n.value:
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                stored = [name.id for target in targets for name in walk(target) if isinstance(name, ast.Name)]
                assignments.append((stored, reads(n.value)))
        changed = True
        while changed:
            changed = False
            for stored, read in assignments:
                axes = axes_of(read)
                if not axes:
                    continue
                for name in stored:
                    if not axes <= derived.get(name, set()):
                        derived[name] = derived.get(name, set()) | axes
                        changed = True
        tiles: dict[int, set[str]] = {}
        for sub in walk(node):
            if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mult):
                for scaled, factor in ((sub.left, sub.right), (sub.right, sub.left)):
                    if isinstance(factor, ast.Name) and factor.id in constexprs:
                        for axis in axes_of(reads(scaled)):
                            tiles.setdefault(axis, set()).add(factor.id)
        return {axis: tuple(sorted(names)) for axis, names in sorted(tiles.items())}

    def _tile_sizes(self, node: ast.FunctionDef | ast.AsyncFunctionDef, constexprs: set[str],
                    open_helpers: frozenset[str] = frozenset()) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Constexpr parameters the kernel uses as a tile size (an argument of tl.arange, a shape, a
        static_range bound, a block shape) or hands to another function where it may be one (a jit helper of
        this module: where that helper uses its parameter so; any other function: always); and those with the
        constexprs that a local used so is computed from alone. `open_helpers`: helpers being read, whose
        recursive calls count as tile uses."""
        used: set[str] = set()
        inputs: set[str] = set()
        # Locals computed from constexprs alone (`C = tl.cdiv(T, BLOCK)`) are compile-time too: a tile they size
        # is sized by those constexprs.
        derived: dict[str, set[str]] = {}
        for statement in walk(node):
            target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                else statement.target if isinstance(statement, ast.AnnAssign) else None
            value = getattr(statement, "value", None)
            if isinstance(target, ast.Name) and value is not None and target.id not in constexprs:
                names = {n.id for n in walk(value) if isinstance(n, ast.Name)} - {"tl", "triton"}
                if names and names <= constexprs and target.id not in derived:
                    derived[target.id] = names
                else:
                    derived[target.id] = set()  # assigned from something else, or twice: not compile-time
        for call in walk(node):
            if not isinstance(call, ast.Call):
                continue
            name = self.qualify(call.func)
            tile = name in _TILE_CALLS or (isinstance(call.func, ast.Attribute) and call.func.attr in _TILE_METHODS
                                           and name is None)
            helper = name is not None and not name.startswith(("triton.", "tl.")) and not isinstance(call.func, ast.Attribute)
            if tile or helper or (name or "").startswith(f"{TL}.extra"):
                args = self._tile_arguments(call, name, open_helpers) if helper and name is not None else \
                    [*call.args, *(k.value for k in call.keywords)]
                if name in _BLOCK_SHAPE_AT:
                    position = _BLOCK_SHAPE_AT[name]
                    args = [k.value for k in call.keywords if k.arg == "block_shape"] + call.args[position:position + 1]
                for arg in args:
                    for n in walk(arg):
                        if isinstance(n, ast.Name):
                            used |= {n.id} & constexprs
                            inputs |= derived.get(n.id, set())
        return tuple(sorted(used)), tuple(sorted(used | inputs))

    def _tile_arguments(self, call: ast.Call, name: str, open_helpers: frozenset[str]) -> list[ast.expr]:
        """The arguments of a helper call that may size a tile there: for a jit helper defined in this module
        (`_attn_fwd_inner(acc, q, ..., N_CTX)`), those bound to a constexpr parameter it uses as a tile size;
        for any other function, or a call it cannot bind, all of them."""
        every = [*call.args, *(k.value for k in call.keywords)]
        local = name.removeprefix(f"{self.module}.") if name.startswith(f"{self.module}.") else None
        helper = next((n for n in self.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and n.name == local and JIT in (self._decorator_name(d) for d in n.decorator_list)), None)
        if helper is None or helper.name in open_helpers or any(isinstance(a, ast.Starred) for a in call.args) \
                or any(k.arg is None for k in call.keywords):
            return every
        params = [arg.arg for arg in [*helper.args.posonlyargs, *helper.args.args]]
        used = self.memoized(("helper-tile-sizes", id(helper), open_helpers), lambda: set(self._tile_sizes(
            helper, {p.name for p in self._params(helper.args) if p.is_constexpr}, open_helpers | {helper.name})[1]))
        bound = [*zip(params, call.args), *((k.arg, k.value) for k in call.keywords)]
        return [arg for param, arg in bound if param in used]

    def _state_axes(self, node: ast.FunctionDef | ast.AsyncFunctionDef, states: list[str]) -> tuple[int, ...]:
        """The axes whose program id is a factor of the offsets at which the kernel both loads and stores
        through one of the `states` parameters (the offset read through names assigned once, or added to
        the parameter itself: `cache += i_n * stride`)."""
        values: dict[str, list[ast.expr]] = {}
        for sub in walk(node):
            if isinstance(sub, ast.Assign):
                for target in sub.targets:
                    if isinstance(target, ast.Name):
                        values.setdefault(target.id, []).append(sub.value)
                    elif isinstance(target, ast.Tuple) and isinstance(sub.value, ast.Tuple) \
                            and len(target.elts) == len(sub.value.elts):
                        for element, value in zip(target.elts, sub.value.elts):
                            if isinstance(element, ast.Name):
                                values.setdefault(element.id, []).append(value)
            elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)) and isinstance(sub.target, ast.Name) and sub.value:
                values.setdefault(sub.target.id, []).append(sub.value)

        def uncast(expr: ast.expr) -> ast.expr:
            while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to":
                expr = expr.func.value  # `tl.program_id(1).to(tl.int64)`
            return expr

        def program_axis(expr: ast.expr) -> int | None:
            expr = uncast(expr)
            if isinstance(expr, ast.Name) and len(values.get(expr.id, ())) == 1:
                expr = uncast(values[expr.id][0])
            if isinstance(expr, ast.Call) and self.qualify(expr.func) == PROGRAM_ID:
                return program_id_axis(expr)
            return None

        def reads(expr: ast.expr, depth: int) -> Iterator[ast.AST]:
            """The nodes of `expr`, names assigned once read through (the state parameter's own
            increments too)."""
            for sub in walk(expr):
                yield sub
                if isinstance(sub, ast.Name) and depth < 4:
                    assigned = values.get(sub.id, [])
                    if len(assigned) == 1 or sub.id in states:
                        for value in assigned:
                            yield from reads(value, depth + 1)

        def indexed(pointer: ast.expr) -> set[tuple[str, int]]:
            nodes = list(reads(pointer, 0))
            named = {n.id for n in nodes if isinstance(n, ast.Name) and n.id in states}
            axes = {axis for n in nodes if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)
                    for axis in (program_axis(n.left), program_axis(n.right)) if axis is not None}
            return {(name, axis) for name in named for axis in axes}

        loaded: set[tuple[str, int]] = set()
        stored: set[tuple[str, int]] = set()
        for sub in walk(node):
            if isinstance(sub, ast.Call) and sub.args:
                name = self.qualify(sub.func)
                if name == f"{TL}.load":
                    loaded |= indexed(sub.args[0])
                elif name == f"{TL}.store":
                    stored |= indexed(sub.args[0])
        return tuple(sorted({axis for _, axis in loaded & stored}))

    def _is_constexpr(self, annotation: ast.expr | None) -> bool:
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return False
        return self.qualify(annotation) == CONSTEXPR

    # ---- autotune and heuristics ---------------------------------------------------------------------
    def _autotune(self, call: ast.Call) -> Autotune:
        kwargs = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        for name, arg in zip(("configs", "key"), call.args):
            kwargs.setdefault(name, arg)
        key_node = kwargs.get("key")
        return Autotune(
            line=call.lineno,
            configs=self._configs(kwargs.get("configs")),
            key=self._string_list(key_node),
            reset_to_zero=self._string_list(kwargs.get("reset_to_zero")) or [],
            restore_value=self._string_list(kwargs.get("restore_value")) or [],
            has_prune="prune_configs_by" in kwargs,
            keywords=tuple(kwargs),
            node=call,
            key_node=key_node,
            configs_node=kwargs.get("configs"),
        )

    def _resolve_local(self, node: ast.expr | None) -> ast.expr | None:
        """Follow a bare name to its single module-level assignment."""
        seen = 0
        while isinstance(node, ast.Name) and node.id in self.assignments and seen < 8:
            node = self.assignments[node.id]
            seen += 1
        return node

    def _string_list(self, node: ast.expr | None) -> list[str] | None:
        node = self._resolve_local(node)
        if not isinstance(node, (ast.List, ast.Tuple)):
            return None
        items = [literal_value(e) for e in node.elts]
        if not all(isinstance(i, str) for i in items):
            return None
        return items  # type: ignore[return-value]

    def _configs(self, node: ast.expr | None) -> list[TuneConfig] | None:
        if node is None:
            return None
        # A decorator outside every function body runs while the module is imported: at its own line.
        at_import = not any(isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                            and stmt.body[0].lineno <= node.lineno <= (stmt.end_lineno or stmt.lineno)
                            for stmt in self.tree.body)
        found = ConfigInterpreter(self, until=node.lineno if at_import else None).configs(node)
        if found is None:
            return None
        return [TuneConfig(index, c.meta, c.num_warps, c.num_stages, c.has_pre_hook, c.line, c.pre_hook_node)
                for index, c in enumerate(found)]

    def _heuristics(self, call: ast.Call) -> dict[str, str]:
        node = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "values"), None)
        node = self._resolve_local(node)
        if not isinstance(node, ast.Dict):
            return {}
        return {
            key.value: ast.unparse(value)
            for key, value in zip(node.keys, node.values)
            if isinstance(key, ast.Constant) and isinstance(key.value, str)
        }

    # ---- launch sites --------------------------------------------------------------------------------
    def _collect_launches(self) -> None:
        """`kernel[grid](...)`, `kernel.run(..., grid=grid, warmup=False)` (JITFunction.run takes the grid by
        keyword), and a call of a local name bound once to `functools.partial(kernel[grid], ...)` (or to a
        partial of `kernel.run`), whose arguments come first."""
        for scope, node in self._statements.calls:
            if isinstance(node.func, ast.Subscript):
                callee = self._launched(node.func.value)
                if callee is not None:
                    self._add_launch(callee, node.func.slice, node, node.args, node.keywords, scope)
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "run":
                grid = next((kw.value for kw in node.keywords if kw.arg == "grid"), None)
                callee = self._launched(node.func.value) if grid is not None else None
                if callee is not None and grid is not None:
                    self._add_launch(callee, grid, node, node.args, _run_keywords(node.keywords), scope)
            elif node.args and isinstance(scope, _DEFINITIONS) and self.qualify(node.func) == PARTIAL:
                self._add_partial_launches(node, scope)
        self._add_wrapper_launches()
        self.launches.sort(key=lambda launch: (launch.node.lineno, launch.node.col_offset))

    def _add_wrapper_launches(self) -> None:
        """A module-level wrapper that gets the kernel as an argument and launches it with exactly its own
        spreads, `def launch(kernel, grid, *args, **kwargs): kernel[grid](*args, **kwargs)`: each call
        `launch(my_kernel, g, x, BLOCK=64)` in this module is a launch of my_kernel with `x, BLOCK=64`."""
        # name -> the kernel's position, the grid (a position or the wrapper's own expression), positional
        # parameters before *args, whether **kwargs is passed on
        wrappers: dict[str, tuple[int, int | ast.expr, int, bool]] = {}
        for launch in self.launches:
            function, callee = launch.scope, launch.node.func
            if not (isinstance(function, _DEFINITIONS) and function in self.tree.body and isinstance(callee, ast.Subscript)
                    and isinstance(callee.value, ast.Name) and function.args.vararg is not None):
                continue
            kernel_name = callee.value.id
            positional = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
            spread = [a.node.value.id for a in launch.args if a.name is None and isinstance(a.node, ast.Starred)
                      and isinstance(a.node.value, ast.Name)]
            keywords = [a.node.id for a in launch.args if a.name == "**" and isinstance(a.node, ast.Name)]
            kwarg = function.args.kwarg.arg if function.args.kwarg is not None else None
            grid_name = launch.grid.id if isinstance(launch.grid, ast.Name) else None
            grid: int | ast.expr = positional.index(grid_name) if grid_name in positional else launch.grid
            if kernel_name in positional and len(launch.args) == len(spread) + len(keywords) \
                    and spread == [function.args.vararg.arg] and keywords in ([], [kwarg]):
                wrappers[function.name] = (positional.index(kernel_name), grid, len(positional), bool(keywords))
        if not wrappers:
            return
        for scope, call in calls_with_scope(self.tree):
            name = call.func.id if isinstance(call.func, ast.Name) else None
            found = wrappers.get(name) if name is not None else None
            if found is None or self.qualify(call.func) != f"{self.module}.{name}":
                continue
            index, grid, count, passes_keywords = found
            if len(call.args) < count or any(isinstance(a, ast.Starred) for a in call.args[:count]):
                continue  # a parameter passed by keyword, or a spread: which argument is which is not known
            callee = call.args[index]
            if isinstance(callee, (ast.Name, ast.Attribute)):
                self._add_launch(callee, call.args[grid] if isinstance(grid, int) else grid, call, call.args[count:],
                                 call.keywords if passes_keywords else [], scope)

    def _add_launch(self, callee: ast.Name | ast.Attribute, grid: ast.expr, node: ast.Call, positional: list[ast.expr],
                    keywords: list[ast.keyword], scope: ast.AST | None) -> None:
        if id(node) in self._unreachable(scope):
            return  # after `if use_fused: ... return` with `use_fused = True`: the host never gets there
        args = [LaunchArg(None, _unparse(a), literal_value(a), node=a) for a in positional]
        args += [LaunchArg(kw.arg or "**", _unparse(kw.value), literal_value(kw.value), node=kw.value, keyword=kw)
                 for kw in keywords]
        self.launches.append(LaunchSite(target=self.qualify(callee), callee_text=_unparse(callee), line=node.lineno,
                                        args=args, grid=grid, node=node, scope=scope))

    def _unreachable(self, scope: ast.AST | None) -> frozenset[int]:
        """The ids of the nodes of a function (or of the module) that follow, in their block, a statement that
        always leaves it: a `return` or `raise`, or an `if` on a constant true test (`True`, or a local bound
        only to `True`) whose body leaves. Memoized per scope."""
        key = ("unreachable", id(scope))
        if key not in self.memo:
            owner = scope if isinstance(scope, _DEFINITIONS) else self.tree if scope is None else None
            flags = _true_flags(owner) if owner is not None else frozenset()
            dead: set[int] = set()
            pending = [owner.body] if owner is not None else []  # a lambda's body is one expression
            while pending:
                block = pending.pop()
                for index, stmt in enumerate(block):
                    if _leaves(stmt, flags):
                        dead.update(id(n) for later in block[index + 1:] for n in walk(later))
                        block = block[: index + 1]
                        break
                for stmt in block:
                    if not isinstance(stmt, (*_DEFINITIONS, ast.ClassDef)):
                        for name in _split_fields(type(stmt))[0]:  # handlers and match cases hold blocks too
                            value = getattr(stmt, name)
                            pending.extend([item.body for item in value] if name in ("handlers", "cases") else [value])
            self.memo[key] = frozenset(dead)
        return self.memo[key]  # type: ignore[no-any-return]

    def _add_partial_launches(self, partial: ast.Call, scope: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """The calls of `launch = functools.partial(kernel[grid], x, BLOCK=64)` in the function that binds it
        once: each is a launch with the partial's arguments before its own (its keywords win)."""
        inner, pre, pre_keywords = partial.args[0], partial.args[1:], partial.keywords
        if isinstance(inner, ast.Subscript):
            callee, grid = self._launched(inner.value), inner.slice
        elif isinstance(inner, ast.Attribute) and inner.attr == "run":
            run_grid = next((kw.value for kw in pre_keywords if kw.arg == "grid"), None)
            if run_grid is None:
                return
            callee, grid, pre_keywords = self._launched(inner.value), run_grid, _run_keywords(pre_keywords)
        else:
            return
        bindings = [n for n in walk(scope) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr))]
        name = next((b.targets[0].id for b in bindings if isinstance(b, ast.Assign) and b.value is partial
                     and len(b.targets) == 1 and isinstance(b.targets[0], ast.Name)), None)
        if callee is None or name is None or sum(target.id == name for b in bindings for target in walk(b)
                                                    if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Store)) != 1:
            return
        for call in walk(scope):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == name:
                self._add_launch(callee, grid, call, [*pre, *call.args], [*pre_keywords, *call.keywords], scope)

    def _launched(self, callee: ast.expr) -> ast.Name | ast.Attribute | None:
        """The kernel expression of `callee[grid](...)`: `kernel`, `mod.kernel`, or the kernel wrapped for
        torch.compile, `torch.library.wrap_triton(kernel)`."""
        if isinstance(callee, ast.Call) and len(callee.args) == 1 and not callee.keywords \
                and self.qualify(callee.func) in KERNEL_WRAPPERS:
            callee = callee.args[0]
        return callee if isinstance(callee, (ast.Name, ast.Attribute)) else None

    # ---- queries -------------------------------------------------------------------------------------
    def function_at(self, line: int) -> JitFunction | None:
        """The innermost jit function whose definition spans `line` (1-based)."""
        return self._function_by_line.get(line)

    @cached_property
    def _function_by_line(self) -> dict[int, JitFunction]:
        # Built once per module: scanning every function for every match is quadratic, and files with
        # thousands of kernels (generated code) would take hours.
        by_line: dict[int, JitFunction] = {}
        own = [f for f in self.functions if f.node is not None and f.name == f.node.name]  # not aliases
        for function in sorted(own, key=lambda f: f.node.lineno):  # type: ignore[union-attr]
            node = function.node
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])  # type: ignore[union-attr]
            for line in range(start, (node.end_lineno or node.lineno) + 1):  # type: ignore[union-attr]
                by_line[line] = function  # an inner function starts later, so it overwrites its outer one
        return by_line

    def may_hand_over(self, name: str) -> bool:
        """Whether some call may pass `name` (or `x.name`) as its first argument, going by the text; True
        when the text is not known."""
        if self.text is None:
            return True
        # Each part can match a stretch of text in one way only: no backtracking blow-up on `(#####...`.
        first = re.compile(r"\((?:\s|#[^\n]*\n)*(?:[A-Za-z_]\w*\s*\.\s*)*" + re.escape(name) + r"(?!\w)")
        return first.search(self.text) is not None

    @cached_property
    def calls_by_first_argument(self) -> dict[str, list[tuple[ast.AST | None, ast.Call]]]:
        """Calls that are not launches, with their enclosing function, by the qualified name of their first
        positional argument: where a kernel is handed to a wrapper, `launch(kernel, grid, ...)`."""
        found: dict[str, list[tuple[ast.AST | None, ast.Call]]] = {}
        for scope, call in calls_with_scope(self.tree):
            if call.args and not isinstance(call.func, ast.Subscript):
                name = self.qualify(call.args[0])
                if name is not None:
                    found.setdefault(name, []).append((scope, call))
        return found

    @cached_property
    def replaced_lines(self) -> frozenset[int]:
        """The lines of module-level functions that a later module-level `def` of the same name replaces before
        anything run at import in between (or the later one's decorators) reads the name: dead code, which nothing
        runs. A function body in between that names it reads the later one, when it is called."""
        body = self.tree.body
        by_name: dict[str, list[int]] = {}
        for index, stmt in enumerate(body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                by_name.setdefault(stmt.name, []).append(index)
        lines: set[int] = set()
        for name, indices in by_name.items():
            for first, later in zip(indices, indices[1:]):
                replaced, replacing = body[first], body[later]
                assert isinstance(replaced, (ast.FunctionDef, ast.AsyncFunctionDef))
                assert isinstance(replacing, (ast.FunctionDef, ast.AsyncFunctionDef))
                readers = [*body[first + 1:later], *replacing.decorator_list]
                if not any(name in _read_at_import(reader) for reader in readers):
                    start = min([replaced.lineno] + [d.lineno for d in replaced.decorator_list])
                    lines.update(range(start, (replaced.end_lineno or replaced.lineno) + 1))
        return frozenset(lines)

    @cached_property
    def is_pattern_replacement(self) -> bool:
        """Whether the module is a torch.fx pattern replacement: module-level functions `pattern` and `replacement`
        (or `replacement_func`, which returns it), the convention of `torch.fx.subgraph_rewriter.replace_pattern`
        and the fusion passes generated for captured graphs. Its launches run only inside the graph the pattern
        matched, at that graph's shapes."""
        defined = {stmt.name for stmt in self.tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return "pattern" in defined and bool(defined & {"replacement", "replacement_func"})

    def local_function(self, name: str) -> JitFunction | None:
        return next((f for f in self.functions if f.qualname == f"{self.module}.{name}"), None)

    def defined_once(self, qualname: str) -> JitFunction | None:
        """The jit function of this module with that qualified name, when the module defines it once: not when
        it defines the name more than once (`if IS_NVIDIA:` an autotuned kernel, `else:` a plain one), since
        which one runs depends on a branch taken at import."""
        found = [f for f in self.functions if f.qualname == qualname]
        return found[0] if len(found) == 1 else None

    def kernel_for(self, launch: LaunchSite) -> JitFunction | None:
        """The jit function a launch site starts, when it is defined in this module, once (`defined_once`)."""
        if launch.target is not None:
            if any(f.qualname == launch.target for f in self.functions):
                return self.defined_once(launch.target)
        callee = launch.node.func.value if isinstance(launch.node.func, ast.Subscript) else None
        if isinstance(callee, ast.Name):
            name = callee.id
            nested = [f for f in self.functions if f.name == name and ".<locals>." in f.qualname]
            if len(nested) == 1 and name not in self.local_names and name not in self.imports:
                return nested[0]
        return None

    def memoized(self, key: tuple[Any, ...], make: Callable[[], T]) -> T:
        """The value kept under `key` in `memo`, made by `make` the first time it is asked for."""
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]  # type: ignore[no-any-return]

    def summaries(self) -> dict[str, JitFunction]:
        return {f.qualname: f.summary() for f in self.functions if ".<locals>." not in f.qualname}


def _read_at_import(stmt: ast.AST) -> set[str]:
    """The names a module-level statement reads when it runs: not those in the bodies of the functions and
    lambdas it defines, which run when called."""
    found: set[str] = set()
    pending = [stmt]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending += [*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            continue
        elif isinstance(node, ast.Lambda):
            pending += [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            continue
        pending.extend(ast.iter_child_nodes(node))
    return found


def _run_keywords(keywords: list[ast.keyword]) -> list[ast.keyword]:
    """The keywords of `kernel.run(...)` that reach the kernel: `grid` and `warmup` are run's own."""
    return [kw for kw in keywords if kw.arg not in ("grid", "warmup")]


def _unparse(node: ast.expr) -> str:
    """ast.unparse, with the common names, dotted names and small literals spelled without its visitor."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (bool, int)) and node.kind is None:
        return repr(node.value)
    return ast.unparse(node)


def _optional_aliases(tree: ast.Module) -> dict[str, list[ast.expr]]:
    """Module-level names whose every binding is a plain assignment of None or of a name (in any block of the
    module's statements, not in functions or classes): their values."""
    counts: dict[str, int] = {}
    for stmt in tree.body:
        for name, _ in _bound_names(stmt):
            counts[name] = counts.get(name, 0) + 1
    values: dict[str, list[ast.expr]] = {}
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            values.setdefault(stmt.targets[0].id, []).append(stmt.value)
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
            pending += [c for c in ast.iter_child_nodes(stmt) if isinstance(c, ast.stmt)]
            pending += [c for handler in getattr(stmt, "handlers", ()) for c in handler.body]
    return {name: found for name, found in values.items() if len(found) == counts.get(name) and all(
        isinstance(v, ast.Name) or isinstance(v, ast.Constant) and v.value is None for v in found)}


def _bound_names(stmt: ast.stmt) -> Iterator[tuple[str, ast.expr | None]]:
    """Names a module-level statement binds, with the value for plain single-target assignments."""
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                yield target.id, stmt.value if len(stmt.targets) == 1 else None
            else:
                for sub in walk(target):
                    if isinstance(sub, ast.Name):
                        yield sub.id, None
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        yield stmt.target.id, stmt.value
    elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        yield stmt.target.id, None
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield stmt.name, None
    elif isinstance(stmt, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                for name, _ in _bound_names(child):
                    yield name, None  # conditional binding: known name, unknown value
        for handler in getattr(stmt, "handlers", ()):
            for child in handler.body:
                for name, _ in _bound_names(child):
                    yield name, None


# Fields that hold statements (or the except handlers and match cases that hold them).
_BLOCK_FIELDS = frozenset({"body", "handlers", "orelse", "finalbody", "cases"})
_fields_of: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _true_flags(scope: ast.AST) -> frozenset[str]:
    """Names a function (or module) binds only to `True` (every binding a plain `name = True`), not parameters."""
    stores: dict[str, int] = {}
    true_assignments: dict[str, int] = {}
    for node in walk(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Constant) and node.value.value is True:
            true_assignments[node.targets[0].id] = true_assignments.get(node.targets[0].id, 0) + 1
    parameters = {a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg)} \
        if isinstance(scope, _DEFINITIONS) else set()
    return frozenset(name for name, count in true_assignments.items()
                     if stores.get(name) == count and name not in parameters)


def _leaves(stmt: ast.stmt, flags: frozenset[str]) -> bool:
    """The statement always leaves its block: `return`, `raise`, or `if <constant true>:` whose body ends so."""
    if isinstance(stmt, (ast.Return, ast.Raise)):
        return True
    if isinstance(stmt, ast.If) and exits(stmt.body):
        test = stmt.test
        return (isinstance(test, ast.Constant) and test.value is True) or (
            isinstance(test, ast.Name) and test.id in flags)
    return False


def exits(body: list[ast.stmt]) -> bool:
    """A block that ends by leaving its function: its last statement a `return` or `raise`."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def calls_with_scope(tree: ast.Module) -> list[tuple[ast.AST | None, ast.Call]]:
    """Every call of a module with the function (or lambda) it sits in; None at module level."""
    found: list[tuple[ast.AST | None, ast.Call]] = []
    _calls_with_scope([tree], None, None, found)
    return found


def _split_fields(kind: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A node type's statement-holding fields and its other fields, each in _fields order."""
    found = _fields_of.get(kind)
    if found is None:
        fields: tuple[str, ...] = getattr(kind, "_fields", ())
        found = _fields_of[kind] = (tuple(f for f in fields if f in _BLOCK_FIELDS),
                                    tuple(f for f in fields if f not in _BLOCK_FIELDS))
    return found


class _Statements:
    """One walk over a module's statements (expressions never hold one) that finds what the model needs:
    - imports, in ast.walk's breadth-first order (by depth, then position), so the first binding wins as
      it always did;
    - function definitions with whether they are nested in a function or class, in the order the
      depth-first stack walk of earlier versions yielded them (duplicate names resolve the same way);
    - calls with their enclosing function or lambda, searched only in the statements that span one of
      `launch_lines` (all calls when it is None): only those can hold a launch `kernel[grid](...)`."""

    def __init__(self, tree: ast.Module, launch_lines: list[int] | None) -> None:
        self.definitions: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]] = []
        self.calls: list[tuple[ast.AST | None, ast.Call]] = []
        imports: list[tuple[int, int, int, ast.stmt]] = []
        # Each entry: node, nested in a function or class, depth, enclosing function, and whether a
        # launch line may lie inside (a statement outside every launch line has none inside it either).
        stack: list[tuple[ast.AST, bool, int, ast.AST | None, bool]] = [
            (tree, False, 0, None, launch_lines is None or bool(launch_lines))]
        while stack:
            node, nested, depth, scope, search = stack.pop()
            blocks, others = _split_fields(type(node))
            if search and node is not tree:
                search = launch_lines is None or _spans_any(node, launch_lines)
            if search and node is not tree:
                inner = node if isinstance(node, (*_DEFINITIONS, ast.Lambda)) else scope
                roots = []
                for name in others:
                    value = getattr(node, name, None)
                    if isinstance(value, ast.AST):
                        roots.append(value)
                    elif isinstance(value, list):
                        roots.extend(v for v in value if isinstance(v, ast.AST))
                _calls_with_scope(roots, inner, launch_lines, self.calls)
            for name in blocks:
                live = search  # the statements after a raise or return in a block never run: no launch there
                for child in getattr(node, name):
                    if isinstance(child, (ast.Import, ast.ImportFrom)):
                        imports.append((depth + 1, child.lineno, child.col_offset, child))
                    elif isinstance(child, _DEFINITIONS):
                        self.definitions.append((child, nested))
                        stack.append((child, True, depth + 1, child, live))
                    else:
                        stack.append((child, nested or isinstance(child, ast.ClassDef), depth + 1, scope, live))
                    live = live and not isinstance(child, (ast.Raise, ast.Return, ast.Continue, ast.Break))
        imports.sort(key=lambda item: item[:3])
        self.imports = [item[3] for item in imports]


def _launch_lines(text: str) -> list[int]:
    """Sorted 1-based lines where a `]` is followed by a call's `(` (or `.run(`, `partial(` is called): the
    only lines a launch can span."""
    if "\r" in text:  # ast counts a lone \r as a line break too
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines: list[int] = []
    for pattern in (LAUNCH_TEXT, OTHER_LAUNCH_TEXT):
        row, position = 1, 0
        for match in pattern.finditer(text):
            row += text.count("\n", position, match.start())
            position = match.start()
            if not lines or lines[-1] != row:
                lines.append(row)
    return sorted(set(lines))


def _spans_any(node: ast.AST, lines: list[int]) -> bool:
    """Whether a node's lines include one of `lines` (sorted); nodes without a position may."""
    start = getattr(node, "lineno", None)
    if start is None:
        return True
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
        start = min(start, node.decorator_list[0].lineno)  # decorators sit above the `def` line
    index = bisect.bisect_left(lines, start)
    return index < len(lines) and lines[index] <= (getattr(node, "end_lineno", None) or start)


def _calls_with_scope(roots: list[ast.AST], scope: ast.AST | None, lines: list[int] | None,
                      found: list[tuple[ast.AST | None, ast.Call]]) -> None:
    """Every call under `roots` with its enclosing function or lambda; with `lines`, only in the subtrees
    that span one of them."""
    stack = [(root, scope) for root in roots]
    while stack:
        node, outer = stack.pop()
        if lines is not None and not _spans_any(node, lines):
            continue
        if isinstance(node, ast.Call):
            found.append((outer, node))
        inner = node if isinstance(node, (*_DEFINITIONS, ast.Lambda)) else outer
        stack.extend((child, inner) for child in children(node))
