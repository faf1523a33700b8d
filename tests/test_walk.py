"""walk() is ast.walk without the operator and context leaves, in the same order; parents() inverts it."""

import ast

from tritonlint.walk import children, parents, walk

SOURCE = '''
import os.path as p, sys
from . import x as y
global_value: int = 1

def f(a, /, b=1, *args, c, d=None, **kw) -> "T":
    global g
    nonlocal_free = {**kw, "k": -a, 1: not b}
    for i in range(3):
        while i < 2 < a or b and c:
            i += 1
    try:
        pass
    except (ValueError, KeyError) as exc:
        raise
    finally:
        del nonlocal_free[0]
    with open(p) as h, open(p):
        yield from [z async for z in h if z if not z]
    return lambda q, *r: f"{q!r:>{r}}" + x[1:2, ::3] @ (y := 2)

match command:
    case {"a": 1, **rest} if rest:
        pass
    case Point(x=0, y=[1, *others]) | None as matched:
        pass
    case _:
        pass
'''

LEAVES = (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)


def test_walk_is_ast_walk_without_leaves_in_the_same_order():
    tree = ast.parse(SOURCE)
    expected = [node for node in ast.walk(tree) if not isinstance(node, LEAVES)]
    assert [id(n) for n in walk(tree)] == [id(n) for n in expected]
    assert [id(n) for n in walk(tree)] == [id(n) for n in expected]  # the kept list gives the same answer


def test_children_and_parents_agree_with_ast():
    tree = ast.parse(SOURCE)
    for node in ast.walk(tree):
        expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, LEAVES)]
        assert children(node) == expected
    up = parents(tree)
    for node in walk(tree)[1:]:
        assert node in children(up[id(node)])
