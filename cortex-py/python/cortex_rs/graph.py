"""Graphs declared in Python: inputs, states, nodes calling the op library
or your own Python callables, modes with weights and node rates, outputs.

``Graph`` writes the same JSON a graph file holds (``Graph.to_json``), and
``Graph.build`` builds it exactly as ``load_graph`` builds a file: the same
checks (each mistake one error, naming the node), the same engines. A
Python callable becomes an op of the pipeline's own op table.
"""

import inspect
import json
import math
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _native

RgbFrame = "RgbFrame"
"""An ``H×W×3`` ``uint8`` RGB frame."""
GrayImage = "GrayImage"
"""An ``H×W`` ``uint8`` image."""
ScoreMap = "ScoreMap"
"""An ``H×W`` ``float32`` map."""
PyObject = "PyObject"
"""Any Python object, passed between Python nodes as it is."""


class Rate:
    """A node rate in a mode: run every ``every``-th frame, and on any
    frame where ``trigger`` (``"node.field"``, a ``bool``) is true; hold
    the last value in between."""

    def __init__(self, every: int, trigger: Optional[str] = None):
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"a rate runs every n-th frame, n an int >= 1, not {every!r}")
        if trigger is not None and not isinstance(trigger, str):
            raise TypeError(f"a rate's trigger is a \"node.field\" string, not {type(trigger).__name__}")
        self.every = every
        self.trigger = trigger

    def __repr__(self) -> str:
        return f"cortex_rs.every({self.every!r}, trigger={self.trigger!r})"


def every(n: int, trigger: Optional[str] = None) -> Rate:
    """A node rate: every ``n``-th frame, and whenever ``trigger``
    (``"scene.changed"``) is true."""
    return Rate(n, trigger)


class Value:
    """A value of the graph (an input, a state or a node), to pass to
    later nodes and to ``Graph.outputs``."""

    def __init__(self, graph: "Graph", name: str, type: str):
        self.graph = graph
        self.name = name
        self.type = type

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}: {self.type or '?'}>"


class State(Value):
    """A state: last frame's value of the node it keeps (``keeps``), the
    type's initial value before the first frame."""

    def keeps(self, node: Value) -> "State":
        """The node whose value this state holds for the next frame (for a
        state read by a node declared before its writer)."""
        self.graph._writes[self.name] = self.graph._ref(node, f"state `{self.name}` keeps")
        return self


Input = Union[Value, str]


def _name(v: Input) -> str:
    return v if isinstance(v, str) else v.name


def _identifier(name: Any, what: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{what}'s name must be a str, not {type(name).__name__}")
    return name


def _caller() -> str:
    """``file:line`` of the user's call (the first frame outside this
    module)."""
    frame = inspect.currentframe()
    here = os.path.abspath(__file__)
    while frame is not None and os.path.abspath(frame.f_code.co_filename) == here:
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


_OUTPUTS: Optional[Dict[str, str]] = None


def _op_output(op: str) -> str:
    """The type op ``op`` gives ('' for an op the library does not have:
    the build reports it)."""
    global _OUTPUTS
    if _OUTPUTS is None:
        _OUTPUTS = {d["name"]: d["output"] for d in _native.ops()}
    return _OUTPUTS.get(op, "")


class Graph:
    """A pipeline being declared. Each method records one declaration;
    ``build`` checks them all and gives a ``Pipeline``."""

    def __init__(self, name: str):
        self.name = name
        self._inputs: List[Tuple[dict, str]] = []
        self._states: List[Tuple[dict, str]] = []
        self._writes: Dict[str, str] = {}
        self._modes: List[Tuple[dict, str]] = []
        self._nodes: List[Tuple[dict, str]] = []
        self._outputs: List[Tuple[dict, str]] = []
        self._types: Dict[str, str] = {}
        self._functions: Dict[str, Callable] = {}

    def _ref(self, v: Any, what: str) -> str:
        """The name of ``v``, a value of this graph or a declared name,
        for ``what`` (the declaration that reads it, for messages)."""
        if isinstance(v, str):
            return v
        if isinstance(v, Value):
            if v.graph is not self:
                raise ValueError(
                    f"{what} `{v.name}` of graph `{v.graph.name}`, not of `{self.name}`"
                )
            return v.name
        raise TypeError(
            f"{what} a value of the graph (what input(), state() or node() returned, "
            f"or its name), not {type(v).__name__}"
        )

    def input(self, name: str, type: str) -> Value:
        """An input of each frame, of ``type`` (``cortex_rs.RgbFrame``…)."""
        _identifier(name, "an input")
        self._inputs.append(({"name": name, "type": type}, _caller()))
        self._types[name] = type
        return Value(self, name, type)

    def state(
        self,
        name: str,
        type: str,
        keeps: Optional[Value] = None,
        *,
        init: Optional[str] = None,
    ) -> State:
        """A state of ``type``: last frame's value of node ``keeps`` (or of
        the node given later to ``State.keeps``); ``init`` names a
        registered constant, the type's own initial value when not given."""
        _identifier(name, "a state")
        decl: Dict[str, Any] = {"name": name, "type": type}
        if init is not None:
            decl["init"] = init
        self._states.append((decl, _caller()))
        self._types[name] = type
        s = State(self, name, type)
        if keeps is not None:
            s.keeps(keeps)
        return s

    def node(
        self,
        name: str,
        op: Union[str, Callable],
        *inputs: Input,
        weight: Optional[str] = None,
        returns: Optional[str] = None,
        params: Optional[Dict[str, Any]] = None,
        **more_params: Any,
    ) -> Value:
        """A node computing ``op`` from ``inputs`` (in the op's order).

        ``op`` names a library op (``"vision.text_map"``; ``cortex_rs.ops()``
        lists them) whose parameters are given by name — as keywords
        (``delta=5``, a nested one as a dict: ``mser={"delta": 5}``) or in
        ``params`` (``{"mser.delta": 5}``) — or is a Python callable, called
        with the inputs' values and returning a ``returns``
        (``cortex_rs.ScoreMap``…; ``cortex_rs.PyObject``, any object, by
        default). ``weight`` makes it a weighted node of that key: a mode
        whose weight is 0 does not run it.
        """
        _identifier(name, "a node")
        decl: Dict[str, Any] = {"name": name}
        args = [self._ref(i, f"node `{name}` reads") for i in inputs]
        if callable(op):
            if params or more_params:
                raise TypeError(
                    f"node `{name}`: a Python callable takes no parameters here; "
                    "bind them first (functools.partial)"
                )
            _check_arity(name, op, len(args))
            op_name = f"py.{name}"
            self._functions[op_name] = op
            ty = returns or PyObject
            decl.update(op=op_name, inputs=args, type=ty, fallible=True)
        elif not isinstance(op, str):
            raise TypeError(
                f"node `{name}`: op is a library op's name or a callable, not {type(op).__name__}"
            )
        else:
            if returns is not None:
                raise TypeError(
                    f"node `{name}`: `returns` is for Python callables; "
                    f"op `{op}` gives what its descriptor says"
                )
            decl.update(op=op, inputs=args)
            merged = dict(params or {})
            merged.update(more_params)
            try:
                json.dumps(merged, allow_nan=False)
            except (TypeError, ValueError) as e:
                raise TypeError(
                    f"node `{name}`: parameters are JSON values (finite numbers, strings, "
                    f"bools, lists, dicts): {e}"
                ) from None
            if merged:
                decl["params"] = merged
            ty = _op_output(op)
        if weight is not None:
            decl["weight_key"] = weight
        self._nodes.append((decl, _caller()))
        self._types[name] = ty
        return Value(self, name, ty)

    def mode(
        self,
        name: str,
        rates: Optional[Dict[Input, Rate]] = None,
        **weights: float,
    ) -> None:
        """A mode: its weight per key (``wt=0.3``) and the node rates it
        runs (``{"text": cortex_rs.every(4, trigger="scene.changed")}``)."""
        _identifier(name, "a mode")
        for key, w in weights.items():
            if isinstance(w, bool) or not isinstance(w, (int, float)):
                raise TypeError(f"mode `{name}`: weight `{key}` must be a number, not {type(w).__name__}")
            if not math.isfinite(w):
                raise ValueError(f"mode `{name}`: weight `{key}` must be finite, not {w}")
        decl: Dict[str, Any] = {"name": name, "weights": weights}
        if rates:
            if not isinstance(rates, dict):
                raise TypeError(f"mode `{name}`: rates is a dict of node → cortex_rs.every(...)")
            listed = []
            for n, r in rates.items():
                if not isinstance(r, Rate):
                    raise TypeError(
                        f"mode `{name}`: the rate of `{_name(n) if isinstance(n, (str, Value)) else n!r}` "
                        f"must be cortex_rs.every(...), not {type(r).__name__}"
                    )
                node = self._ref(n, f"mode `{name}`'s rate for")
                listed.append({"node": node, "every": r.every, **({"trigger": r.trigger} if r.trigger else {})})
            decl["rates"] = listed
        self._modes.append((decl, _caller()))

    def outputs(self, *values: Value, optional: Sequence[Value] = ()) -> None:
        """The values each frame returns, by their names; those in
        ``optional`` may be absent (a mode that does not compute them)."""
        where = _caller()
        opt = {self._ref(v, "an optional output is") for v in optional}
        for v in list(values) + [v for v in optional if v not in values]:
            n = self._ref(v, "an output is")
            decl: Dict[str, Any] = {"name": n, "type": self._types.get(n, "")}
            if n in opt:
                decl["optional"] = True
            self._outputs.append((decl, where))

    def _lines(self) -> Tuple[str, Dict[int, str]]:
        """The graph file's text, one declaration a line, and the Python
        place of each declaration's line."""
        lines = ["{", f'  "name": {json.dumps(self.name)},']
        where: Dict[int, str] = {}
        states = []
        for decl, at in self._states:
            d = dict(decl)
            if d["name"] in self._writes:
                d["from"] = self._writes[d["name"]]
            else:
                d["from"] = ""
            states.append((d, at))
        sections = [
            ("inputs", self._inputs),
            ("states", states),
            ("modes", self._modes),
            ("nodes", self._nodes),
            ("outputs", self._outputs),
        ]
        for s, (key, decls) in enumerate(sections):
            lines.append(f'  "{key}": [')
            for i, (decl, at) in enumerate(decls):
                where[len(lines) + 1] = at
                comma = "," if i + 1 < len(decls) else ""
                lines.append("    " + json.dumps(decl) + comma)
            lines.append("  ]" + ("," if s + 1 < len(sections) else ""))
        lines.append("}")
        return "\n".join(lines) + "\n", where

    def to_json(self) -> str:
        """The graph as a graph file's text (what ``load_graph`` reads;
        Python nodes name their callables as ops ``py.<node>``, which
        ``load_graph(..., functions=...)`` supplies)."""
        return self._lines()[0]

    def functions(self) -> Dict[str, Callable]:
        """The Python callables of the graph, by the op names its nodes
        call."""
        return dict(self._functions)

    def build(self, *, profile: bool = False) -> "_native.Pipeline":
        """Checks the graph and builds it. Raises ``cortex_rs.GraphError``
        (a ``ValueError``) listing every mistake, each at the Python line
        that declared it."""
        unkept = [
            f"{at}: state `{d['name']}` keeps no node: give `keeps=` or call `.keeps(node)`"
            for d, at in self._states
            if d["name"] not in self._writes
        ]
        if unkept:
            err = _native.GraphError("\n".join(unkept))
            err.problems = [(0, line) for line in unkept]
            raise err
        text, where = self._lines()
        try:
            return _native.Pipeline(text, functions=self._functions, profile=profile)
        except _native.GraphError as e:
            problems = getattr(e, "problems", [])
            if not problems:
                raise
            lines = [
                f"{where[line]}: {message}" if line in where else message
                for line, message in problems
            ]
            err = _native.GraphError("\n".join(lines))
            err.problems = problems
            raise err from None


def _check_arity(name: str, fn: Callable, n: int) -> None:
    """Raises ``TypeError`` when ``fn`` cannot be called with ``n``
    positional arguments (a callable whose signature Python cannot tell
    is taken as it is)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*([None] * n))
    except TypeError as e:
        raise TypeError(
            f"node `{name}`: its callable {getattr(fn, '__name__', fn)!r}{sig} cannot take "
            f"the node's {n} input{'s' if n != 1 else ''}: {e}"
        ) from None


def load_graph(
    path: Union[str, "os.PathLike[str]"],
    *,
    functions: Optional[Dict[str, Callable]] = None,
    profile: bool = False,
) -> "_native.Pipeline":
    """Builds the graph file at ``path`` over the op library and
    ``functions`` (op name → Python callable, for nodes whose ``op`` is
    that name; each returns its node's declared ``type``)."""
    return _native.Pipeline(path=os.fspath(path), functions=functions or {}, profile=profile)
