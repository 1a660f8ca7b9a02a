"""Say which machine NumPy and OpenBLAS think they are on, and check that a simulated one took effect.

`make test-portable` runs the tests once per simulated machine (NumPy's SIMD dispatch limited by
NPY_DISABLE_CPU_FEATURES, OpenBLAS's kernels chosen by OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS). A misspelt
setting would silently simulate nothing, so before each run this prints what the libraries report and exits 1 if
a feature that should be off is on, or if OpenBLAS runs another core type than the one asked for.

A simulated machine can equal one already run: NPY_DISABLE_CPU_FEATURES can only switch off what the CPU has, so on a
CPU without AVX-512 "no AVX-512" is the machine as it is. With ``--seen FILE``, the script compares what the libraries
report (NumPy's dispatch targets, OpenBLAS's core and threads) with the machines listed in FILE, one per line; if an
earlier one reported the same, it says so and exits 3 (the run is skipped), and otherwise adds this machine to FILE.

    python tools/machine.py <name> [--seen FILE]
"""
from __future__ import annotations

import ctypes
import glob
import os
import re
import sys
from pathlib import Path

import numpy as np
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__


def openblas() -> tuple[str, int]:
    """(core type, threads) of the OpenBLAS that NumPy bundles; ("unknown", 0) where it is another BLAS."""
    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "libscipy_openblas*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for suffix in ("64_", ""):
            core = getattr(lib, f"scipy_openblas_get_corename{suffix}", None)
            threads = getattr(lib, f"scipy_openblas_get_num_threads{suffix}", None)
            if core is not None and threads is not None:
                core.restype = ctypes.c_char_p
                return core().decode(), int(threads())
    return "unknown", 0


SKIPPED = 3  # the exit status for "the same as a machine already run"


def main(name: str, seen: str | None = None) -> int:
    on = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
    core, threads = openblas()
    what = f"NumPy {np.__version__} dispatches to {', '.join(on) or 'baseline only'}; OpenBLAS core {core}, {threads} thread(s)"
    print(f"machine {name}: {what}")
    problems = [f"{f} is still on" for f in re.split(r"[\s,]+", os.environ.get("NPY_DISABLE_CPU_FEATURES", "")) if f
                if __cpu_features__.get(f)]
    asked = os.environ.get("OPENBLAS_CORETYPE")
    if asked and core != "unknown" and core.lower() != asked.lower():
        problems.append(f"OpenBLAS runs {core}, not the {asked} asked for")
    want = os.environ.get("OPENBLAS_NUM_THREADS")
    if want and core != "unknown" and threads != min(int(want), os.cpu_count() or 1):
        problems.append(f"OpenBLAS runs {threads} thread(s), not {want}")
    for p in problems:
        print(f"machine {name}: the simulation did not take effect: {p}", file=sys.stderr)
    if problems:
        return 1
    if seen:
        record = Path(seen)
        earlier = dict(line.split("\t", 1)[::-1] for line in record.read_text().splitlines()) if record.exists() else {}
        if what in earlier:
            print(f"machine {name}: the same NumPy dispatch and OpenBLAS core as machine {earlier[what]}, already run: skipped")
            return SKIPPED
        with record.open("a") as f:
            f.write(f"{name}\t{what}\n")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    seen_file = args[args.index("--seen") + 1] if "--seen" in args else None
    names = [a for k, a in enumerate(args) if a != "--seen" and (k == 0 or args[k - 1] != "--seen")]
    sys.exit(main(names[0] if names else "this", seen_file))
