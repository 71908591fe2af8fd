"""A small AST mutator: the mutation points of Python files, and a mutant applied to its file's text.

A mutant is one small change at one place in one file: (file, line, column, operator, replacement). The
operators are the mistakes a hand makes:

    compare       one comparison operator flipped: < and <=, > and >=, == and !=, in and not in, is and is not
    boolean       `and` and `or` swapped, a `not` removed, True and False swapped
    constant      an integer constant one more or one less
    drop          a statement of a function body replaced by `pass`
    swap-args     two neighbouring positional arguments of a call swapped
    early-return  `return None` put before the first statement of a function

`mutation_points(path, text)` lists every mutant of one file, in source order. `apply(mutant, text)` gives the
file's text with the mutant in it: the mutated node's source segment is spliced out and its replacement put in
its place, so the rest of the file keeps its formatting, comments and line numbers. An expression's replacement
is unparsed from the mutated node (`ast.unparse`) and parenthesized, which keeps it one expression wherever it
stands. `check(mutant, text)` says whether the mutated text parses and differs from the original as a tree.

Spots where a change is equivalent or means nothing are left out by rule, never one by one:
docstrings and every string (messages, names, log text are not mutated at all), f-strings, type annotations and
`if TYPE_CHECKING:` blocks, decorators, `assert` statements (a check of the code itself: flipped it fires on every
run, dropped it never would have), the exception a `raise` builds (its message), calls to print, logging and
warnings, `__repr__`/`__str__`/`__format__`, symmetric calls (min, max, isinstance, getattr...) for swap-args,
`match` patterns, and statements outside function bodies for drop (an import or a definition dropped only
fails on a NameError).

Columns in `ast` are byte offsets into the line's UTF-8 encoding; splicing works on bytes for that reason.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from dataclasses import dataclass
from typing import Iterator, Optional

OPERATORS: tuple[str, ...] = ("compare", "boolean", "constant", "drop", "swap-args", "early-return")

#: each comparison operator and the one it is flipped to
COMPARE_FLIPS: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}

#: functions whose text only describes an object
DESCRIPTIVE_FUNCTIONS = frozenset({"__repr__", "__str__", "__format__", "__rich_repr__"})

#: calls that write text somewhere (their statements are not dropped, their arguments not swapped)
OUTPUT_CALLS = frozenset({"print", "warn", "debug", "info", "warning", "error", "exception", "critical", "log"})

#: calls whose positional arguments are symmetric or whose swap only raises a TypeError on any input
SWAP_EXEMPT_CALLS = frozenset({
    "min", "max", "isinstance", "issubclass", "getattr", "setattr", "hasattr", "delattr", "print", "format",
    "join", "append", "add", "update", "extend", "zip", "super", "type", "cast", "field",
}) | OUTPUT_CALLS

#: statements that are not dropped: nothing to drop, or a definition whose loss is only a NameError
UNDROPPABLE = (ast.Pass, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
               ast.Global, ast.Nonlocal, ast.Assert)


@dataclass(frozen=True)
class Mutant:
    path: str  # relative, with forward slashes: kmodel/store/mvcc.py
    line: int  # 1-based, where the replaced segment starts
    col: int  # byte offset in that line
    end_line: int
    end_col: int
    operator: str
    original: str  # the replaced segment's text ("" for an insertion)
    replacement: str
    scope: str  # the enclosing function or class, dotted ("" at module level)
    ident: str = ""  # stable id: see `identify`

    @property
    def package(self) -> str:
        """The model package the file is in: kmodel/<package>/..."""
        parts = self.path.split("/")
        return parts[1] if len(parts) > 2 else parts[0]

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.end_line, self.end_col, self.operator, self.replacement)

    def location(self) -> str:
        return f"{self.path}:{self.line}"


def _segment(lines: list[bytes], node: ast.AST) -> str:
    return _text_between(lines, node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def _text_between(lines: list[bytes], line: int, col: int, end_line: int, end_col: int) -> str:
    if line == end_line:
        return lines[line - 1][col:end_col].decode("utf-8")
    parts = [lines[line - 1][col:]] + lines[line:end_line - 1] + [lines[end_line - 1][:end_col]]
    return b"".join(parts).decode("utf-8")


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _returns_nothing(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Return) and (stmt.value is None or (
        isinstance(stmt.value, ast.Constant) and stmt.value.value is None))


def _is_output_call(stmt: ast.stmt) -> bool:
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    if _call_name(call) in OUTPUT_CALLS:
        return True
    func = call.func
    base = func.value if isinstance(func, ast.Attribute) else None
    return isinstance(base, ast.Name) and base.id in {"logging", "logger", "log", "warnings"}


def _is_skipped_block(stmt: ast.stmt) -> bool:
    """`if TYPE_CHECKING:` and `if __name__ == "__main__":` blocks."""
    if not isinstance(stmt, ast.If):
        return False
    test = stmt.test
    if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
        return True
    if isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING":
        return True
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__")


def _is_abstract(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    names = {d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else ""
             for d in fn.decorator_list}
    return bool(names & {"abstractmethod", "overload"})


def _wrap(expr: ast.expr) -> str:
    return f"({ast.unparse(expr)})"


class _Finder:
    """Walks one module and yields its mutants (without ids) in source order."""

    #: fields whose subtrees are never mutated (annotations, decorators, messages, patterns)
    SKIPPED_FIELDS = {
        (ast.arg, "annotation"), (ast.FunctionDef, "returns"), (ast.AsyncFunctionDef, "returns"),
        (ast.AnnAssign, "annotation"), (ast.FunctionDef, "decorator_list"),
        (ast.AsyncFunctionDef, "decorator_list"), (ast.ClassDef, "decorator_list"), (ast.Raise, "exc"),
        (ast.Raise, "cause"), (ast.match_case, "pattern"),
    }

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = text.encode("utf-8").splitlines(keepends=True)

    def mutant(self, node_or_span, operator: str, replacement: str, scope: str) -> Mutant:
        if isinstance(node_or_span, ast.AST):
            span = (node_or_span.lineno, node_or_span.col_offset, node_or_span.end_lineno, node_or_span.end_col_offset)
        else:
            span = node_or_span
        original = _text_between(self.lines, *span)
        return Mutant(self.path, span[0], span[1], span[2], span[3], operator, original, replacement, scope)

    def walk(self, node: ast.AST, scope: str, in_function: bool) -> Iterator[Mutant]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in DESCRIPTIVE_FUNCTIONS:
                return
            inner = f"{scope}.{node.name}" if scope else node.name
            yield from self.function(node, inner)
            for field, value in ast.iter_fields(node):
                if field == "body":
                    yield from self.body(value, inner, True, function_body=True)
                elif (type(node), field) not in self.SKIPPED_FIELDS:
                    yield from self.children(value, scope, in_function)
            return
        if isinstance(node, ast.ClassDef):
            inner = f"{scope}.{node.name}" if scope else node.name
            for field, value in ast.iter_fields(node):
                if field == "body":
                    yield from self.body(value, inner, False)
                elif (type(node), field) not in self.SKIPPED_FIELDS:
                    yield from self.children(value, scope, in_function)
            return
        if isinstance(node, (ast.JoinedStr, ast.Assert)):
            return
        yield from self.expression(node, scope)
        for field, value in ast.iter_fields(node):
            if (type(node), field) in self.SKIPPED_FIELDS:
                continue
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield from self.body(value, scope, in_function)
            else:
                yield from self.children(value, scope, in_function)

    def children(self, value, scope: str, in_function: bool) -> Iterator[Mutant]:
        if isinstance(value, ast.AST):
            yield from self.walk(value, scope, in_function)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    yield from self.walk(item, scope, in_function)

    def body(self, stmts: list[ast.stmt], scope: str, in_function: bool, *,
             function_body: bool = False) -> Iterator[Mutant]:
        for i, stmt in enumerate(stmts):
            if _is_skipped_block(stmt) or (i == 0 and _is_docstring(stmt)):
                continue
            if function_body and i == len(stmts) - 1 and _returns_nothing(stmt):
                pass  # a function's last `return` of nothing: dropped, it still returns None
            elif in_function and self.droppable(stmt):
                yield self.mutant(stmt, "drop", "pass", scope)
            yield from self.walk(stmt, scope, in_function)

    def droppable(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, UNDROPPABLE) or _is_docstring(stmt) or _is_output_call(stmt):
            return False
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return False  # a bare `...`
        return not self.lines[stmt.lineno - 1][stmt.col_offset:].startswith(b"elif")

    def function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, scope: str) -> Iterator[Mutant]:
        """early-return: `return None` on a line of its own before the first statement after the docstring."""
        if _is_abstract(fn):
            return
        body = fn.body[1:] if _is_docstring(fn.body[0]) else fn.body
        if not body:
            return
        first = body[0]
        if isinstance(first, (ast.Return, ast.Raise, ast.Pass)) or (
                isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
            return
        if self.lines[first.lineno - 1][:first.col_offset].strip():
            return  # the body shares a line with the `def` or with another statement
        indent = " " * first.col_offset
        at = (first.lineno, first.col_offset, first.lineno, first.col_offset)
        yield self.mutant(at, "early-return", f"return None\n{indent}", scope)

    def expression(self, node: ast.AST, scope: str) -> Iterator[Mutant]:
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                flipped = COMPARE_FLIPS.get(type(op))
                if flipped is None:
                    continue
                ops = list(node.ops)
                ops[i] = flipped()
                yield self.mutant(node, "compare", _wrap(ast.Compare(node.left, ops, node.comparators)), scope)
        elif isinstance(node, ast.BoolOp):
            other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            yield self.mutant(node, "boolean", _wrap(ast.BoolOp(other, node.values)), scope)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield self.mutant(node, "boolean", _wrap(node.operand), scope)
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                yield self.mutant(node, "boolean", repr(not value), scope)
            elif isinstance(value, int):
                for changed in (value + 1, value - 1):
                    yield self.mutant(node, "constant", str(changed) if changed >= 0 else f"({changed})", scope)
        elif isinstance(node, ast.Call) and _call_name(node) not in SWAP_EXEMPT_CALLS:
            args = node.args
            for i in range(len(args) - 1):
                a, b = args[i], args[i + 1]
                if isinstance(a, ast.Starred) or isinstance(b, ast.Starred):
                    continue
                first, second = _segment(self.lines, a), _segment(self.lines, b)
                if ast.dump(a) == ast.dump(b):
                    continue
                between = _text_between(self.lines, a.end_lineno, a.end_col_offset, b.lineno, b.col_offset)
                span = (a.lineno, a.col_offset, b.end_lineno, b.end_col_offset)
                yield self.mutant(span, "swap-args", f"{second}{between}{first}", scope)


def identify(mutants: list[Mutant]) -> list[Mutant]:
    """Give each mutant of one file its stable id: a digest of its file, scope, operator, the text it replaces
    and its replacement, and which occurrence of that same change in that scope it is. Unlike a line number,
    the id survives edits elsewhere in the file, so a table of exclusions keeps naming the same mutants."""
    seen: dict[tuple, int] = {}
    out = []
    for m in mutants:
        key = (m.path, m.scope, m.operator, " ".join(m.original.split()), m.replacement.strip())
        n = seen.get(key, 0)
        seen[key] = n + 1
        digest = hashlib.sha1(repr((key, n)).encode("utf-8")).hexdigest()[:10]
        out.append(Mutant(**{**m.__dict__, "ident": digest}))
    return out


def mutation_points(path: str, text: str) -> list[Mutant]:
    """Every mutant of one file (`path` as it should be reported, `text` its source), in source order."""
    tree = ast.parse(text)
    finder = _Finder(path, text)
    found = list(finder.body(tree.body, "", False))
    found.sort(key=Mutant.sort_key)
    return identify(found)


def apply(mutant: Mutant, text: str) -> str:
    """`text` (the mutant's file as it was enumerated) with the mutant in it."""
    lines = text.encode("utf-8").splitlines(keepends=True)
    if _text_between(lines, mutant.line, mutant.col, mutant.end_line, mutant.end_col) != mutant.original:
        raise ValueError(f"{mutant.location()}: the file changed since its mutants were listed")
    head = b"".join(lines[:mutant.line - 1]) + lines[mutant.line - 1][:mutant.col]
    tail = lines[mutant.end_line - 1][mutant.end_col:] + b"".join(lines[mutant.end_line:])
    return (head + mutant.replacement.encode("utf-8") + tail).decode("utf-8")


@functools.lru_cache(maxsize=4)
def _tree_dump(text: str) -> str:
    return ast.dump(ast.parse(text))


def check(mutant: Mutant, text: str) -> Optional[str]:
    """None if the mutant applies to `text`, parses and changes the tree; else why not."""
    try:
        mutated = apply(mutant, text)
    except ValueError as exc:
        return str(exc)
    try:
        tree = ast.parse(mutated)
    except SyntaxError as exc:
        return f"does not parse: {exc.msg}"
    if ast.dump(tree) == _tree_dump(text):
        return "equivalent: the tree is unchanged"
    return None


def changed_lines(mutant: Mutant, text: str) -> tuple[str, str]:
    """The mutated line before and after, stripped (for a change spanning lines: its first line, and the
    replacement's text on one line)."""
    before = text.splitlines()[mutant.line - 1].strip()
    after_text = apply(mutant, text).splitlines()
    if mutant.operator == "early-return":
        return before, f"return None; {before}"
    after = after_text[mutant.line - 1].strip()
    if mutant.end_line > mutant.line:
        after = after + " …"
    return before, after
