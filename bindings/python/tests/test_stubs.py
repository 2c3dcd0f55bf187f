"""The type stubs (``_core.pyi``) declare everything the compiled module has, with the
compiled signatures' parameter names and order."""

import ast
import inspect
from pathlib import Path

import sketchlearn
from sketchlearn import _core

STUBS = Path(sketchlearn.__file__).with_name("_core.pyi")


def _stub_defs():
    """{name: parameter names} for the stub's functions and methods (``Class.method``;
    ``Class`` for ``__init__``), and the set of class names."""
    tree = ast.parse(STUBS.read_text(encoding="utf-8"))
    defs, classes = {}, set()

    def params(fn):
        a = fn.args
        names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
        return [n for n in names if n != "self"]

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            defs[node.name] = params(node)
        elif isinstance(node, ast.ClassDef):
            classes.add(node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    key = node.name if item.name == "__init__" else f"{node.name}.{item.name}"
                    defs[key] = params(item)
    return defs, classes


def _compiled_params(obj):
    sig = getattr(obj, "__text_signature__", None)
    if sig is None:
        return None
    return [p for p in inspect.signature(obj).parameters if p != "self"]


def test_every_compiled_name_and_signature_is_in_the_stubs():
    defs, classes = _stub_defs()
    missing, differ = [], []
    for name, obj in vars(_core).items():
        if name.startswith("_") or not callable(obj):
            continue
        if inspect.isclass(obj):
            if name not in classes:
                missing.append(name)
                continue
            members = [(name, obj)] + [
                (f"{name}.{m}", f)
                for m, f in vars(obj).items()
                if not m.startswith("_") and callable(f)
            ]
        else:
            members = [(name, obj)]
        for key, f in members:
            want = _compiled_params(f)
            if want is None:
                continue
            if key not in defs:
                missing.append(key)
            elif defs[key] != want:
                differ.append((key, defs[key], want))
    assert not missing and not differ, (missing, differ)
