"""cli: the `pyjitc` command (also `python -m pyjitc`).

  pyjitc mlir     module.py:function --arg f32[1000,5] [--stage typed|stablehlo|iree-input]
  pyjitc compile  module.py:function --arg f32[4] --arg int -o out.vmfb [--target cuda --cpu sm_90]
  pyjitc run      out.vmfb --input x.npy --input 'f32[3]=1,2,3' --input 2.5 [-o results.npz]
  pyjitc devices

Argument specs (--arg): an array template `f32[1000,5]` / `i64[]` / `bool[3]` (dtype short names
bool i8 i16 i32 i64 u8 u16 u32 u64 f16 f32 f64), `int` / `float` / `bool` for a run-time Python
scalar, or `static:VALUE` for a compile-time value (a Python literal: `static:3`, `static:'max'`).
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import sys
import traceback
from pathlib import Path

import numpy as np

from . import tree
from .errors import ArgumentError, JitError
from .progress import compiling


class UsageError(Exception):
    pass


# ---------------------------------------------------------------- loading the user's function

def load_function(ref: str):
    """`path/to/module.py:function` -> the function object (a @jit function or a plain one)."""
    path, sep, name = ref.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected MODULE.py:FUNCTION, got {ref!r}")
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"no such file: {path}")
    module_name = f"pyjitc_user_{abs(hash(str(file.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(file.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise UsageError(f"{e.filename}:{e.lineno}:{e.offset or 0}: SyntaxError: {e.msg}") from None
    except JitError:
        raise
    except Exception as e:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == str(file)]
        where = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else f"{file}: "
        raise UsageError(f"{where}{type(e).__name__} while importing the module: {e}") from None
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{file} has no function {name!r}")
        obj = getattr(obj, part)
    return obj


def parse_arg(text: str):
    """One --arg: (example value or Template, is_static)."""
    from .template import Template
    text = text.strip()
    if text in ("int", "float", "bool"):
        return {"int": 0, "float": 0.0, "bool": False}[text], False
    if text.startswith("static:"):
        try:
            return ast.literal_eval(text[len("static:"):]), True
        except (ValueError, SyntaxError):
            raise UsageError(f"--arg {text!r}: the static value must be a Python literal") from None
    try:
        return Template.parse(text), False
    except ArgumentError as e:
        raise UsageError(f"--arg {text!r}: {e}; or use int, float, bool, static:VALUE") from None


def lowered_for(ref: str, arg_specs: list[str], target: str, cpu: str):
    from .api import JitFunction, jit
    fn = load_function(ref)
    options = {}
    if isinstance(fn, JitFunction):
        options = {"static_argnames": tuple(fn._static)}
        fn = fn.__wrapped__
    if not callable(fn):
        raise UsageError(f"{ref} is not a function")
    args, static = [], set(options.get("static_argnames", ()))
    names = list(__import__("inspect").signature(fn).parameters)
    for i, text in enumerate(arg_specs):
        value, is_static = parse_arg(text)
        if is_static:
            if i >= len(names):
                raise UsageError(f"{ref} takes {len(names)} arguments, --arg {i + 1} is one too many")
            static.add(names[i])
        args.append(value)
    jitted = jit(fn, static_argnames=tuple(static), target=target, cpu=cpu)
    return jitted.lower(*args)


# ---------------------------------------------------------------- run inputs and outputs

def parse_input(text: str):
    """--input: a .npy file, `f32[2,3]=1,2,3,4,5,6` (or one value to fill), or a Python literal."""
    from .template import Template
    if text.endswith(".npy"):
        return np.load(text)
    if "=" in text and "[" in text.split("=", 1)[0]:
        head, values = text.split("=", 1)
        t = Template.parse(head)
        data = [v for v in values.replace(" ", ",").split(",") if v]
        dtype = t.dtype
        items = [(v.lower() in ("1", "true")) if dtype == np.bool_ else v for v in data]
        arr = np.array(items, dtype=dtype)
        size = int(np.prod(t.shape, dtype=np.int64))
        if arr.size == 1:
            return np.full(t.shape, arr[0], dtype=dtype)
        if arr.size != size:
            raise UsageError(f"--input {text!r}: {arr.size} values for shape {t.shape} ({size} needed)")
        return arr.reshape(t.shape)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise UsageError(f"--input {text!r}: expected FILE.npy, TEMPLATE=VALUES (f32[3]=1,2,3) or a number") from None
    return value


def _flat_results(value, prefix="result"):
    for path, v in tree.leaves_with_paths(value):
        yield prefix + "".join(f"[{k!r}]" for k in path), v


# ---------------------------------------------------------------- subcommands

def cmd_mlir(a) -> int:
    with compiling(a.function):   # a spinner naming the phase on a terminal (pyjitc/progress.py)
        lowered = lowered_for(a.function, a.arg, a.target, a.cpu)
        text = lowered.as_text(a.stage, debug_info=a.debug_info)
    print(text)
    return 0


def cmd_compile(a) -> int:
    with compiling(f"{a.function} for {a.target}"):
        compiled = lowered_for(a.function, a.arg, a.target, a.cpu).compile()
    out = compiled.save(a.output)
    print(f"wrote {out} ({len(compiled.vmfb)} bytes): {compiled.signature.describe()} "
          f"for {a.target}; run it with: iree-run-module --module={out} --function={compiled.signature.name}",
          file=sys.stderr)
    return 0


def cmd_run(a) -> int:
    from .stages import load
    library = load(a.module, device=a.device)
    fn = library[a.function] if a.function else library
    if a.function is None and len(library.functions) != 1:
        raise UsageError(f"{a.module} has several functions; choose one with --function: "
                         + ", ".join(library.functions))
    inputs = [parse_input(t) for t in a.input]
    result = fn(*inputs)
    flat = list(_flat_results(result))
    if a.output:
        arrays = {name: np.asarray(v) for name, v in flat}
        if a.output.endswith(".npy"):
            if len(arrays) != 1:
                raise UsageError("several results: save them with -o results.npz")
            np.save(a.output, next(iter(arrays.values())))
        else:
            np.savez(a.output, **arrays)
        print(f"wrote {a.output}", file=sys.stderr)
    else:
        for name, v in flat:
            arr = np.asarray(v)
            print(f"{name}: {arr.dtype}{list(arr.shape)} = {np.array2string(arr, threshold=50)}")
    return 0


def cmd_devices(a) -> int:
    from .api import devices
    found = devices()
    if a.json:
        print(json.dumps({d: [str(x) for x in v] for d, v in found.items()}, indent=2))
        return 0
    for driver, devs in found.items():
        print(f"{driver}: {len(devs)} device(s)")
        for d in devs:
            print(f"  {d}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from .backend.target import TARGET_DRIVERS
    from .stages import STAGES
    p = argparse.ArgumentParser(prog="pyjitc", description="Compile NumPy-style Python functions with IREE.",
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    def function_args(sp):
        sp.add_argument("function", help="MODULE.py:FUNCTION")
        sp.add_argument("--arg", action="append", default=[], metavar="SPEC",
                        help="one per parameter, in order: f32[1000,5], i64[], int, float, bool, static:VALUE")
        sp.add_argument("--target", default="llvm-cpu", choices=sorted(TARGET_DRIVERS),
                        help="IREE target backend (default llvm-cpu)")
        sp.add_argument("--cpu", default="host",
                        help="llvm-cpu CPU (host, generic, znver4, ...) or GPU chip (sm_90, gfx942, ...)")

    m = sub.add_parser("mlir", help="print the module at one stage", description="Print the compiled module at one stage.")
    function_args(m)
    m.add_argument("--stage", default="stablehlo", choices=STAGES)
    m.add_argument("--debug-info", action="store_true", help="show Python file:line:col locations")
    m.set_defaults(run=cmd_mlir)

    c = sub.add_parser("compile", help="compile to a .vmfb", description="Compile a function to a .vmfb file.")
    function_args(c)
    c.add_argument("-o", "--output", required=True, help="the .vmfb to write")
    c.set_defaults(run=cmd_compile)

    r = sub.add_parser("run", help="run a .vmfb written by pyjitc", description="Run a .vmfb written by pyjitc.")
    r.add_argument("module", help="the .vmfb")
    r.add_argument("--function", help="which function (when the file has several)")
    r.add_argument("--input", action="append", default=[], metavar="VALUE",
                   help="one per parameter: FILE.npy, f32[2,3]=1,2,3,4,5,6, or a number")
    r.add_argument("--device", help="IREE driver (default: the one for the module's target)")
    r.add_argument("-o", "--output", help="save the results (.npy for one result, .npz for several)")
    r.set_defaults(run=cmd_run)

    d = sub.add_parser("devices", help="list IREE drivers and devices", description="List IREE drivers and devices.")
    d.add_argument("--json", action="store_true")
    d.set_defaults(run=cmd_devices)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (JitError, UsageError, ArgumentError) as e:
        print(f"pyjitc {args.command}: {e}", file=sys.stderr)
        return 1
    except IndexError as e:   # a RunError from the compiled code
        print(f"pyjitc {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
