"""Loading Debian's libsystemc and the samfuse SystemC models into this process (cppyy).

The models are compiled ahead of time: ``samfuse_driver.cpp`` (the driver, a flat
interface on plain types, its model table completed from the catalogue:
:func:`generated_models`) and every model header go into one shared library, built with
g++ once and cached in ``$SAMFUSE_CACHE`` / ``$XDG_CACHE_HOME`` / ``~/.cache``
(``samfuse/systemc/``), keyed by a hash of the headers, the compiler, the flags, the
libsystemc file and the cppyy version. cppyy loads that library and parses only the
driver's declarations, so a process pays no JIT compilation of the models (which cost
about 6 s per process when cppyy compiled the headers itself). The build is atomic and
guarded by a file lock, so concurrent first uses build it once. See docs/systemc.md.

Two workarounds make libsystemc usable from Python (docs/systemc.md):

1. ``libsystemc.so`` has an undefined reference to ``sc_main`` (its own ``main`` calls
   it); the library defines a stub ``sc_main`` and is loaded with ``RTLD_GLOBAL``.
2. The library is built as C++17 and its headers check that the including translation
   unit uses the same standard; cppyy's interpreter runs C++20, so ``SC_CPLUSPLUS`` must
   be defined as ``201703L`` before ``<systemc>`` when the headers themselves are
   included (``load``; the samfuse headers do this).
"""

from __future__ import annotations

import ctypes.util
import fcntl
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["HEADER_DIR", "cache_dir", "models_library", "driver", "load", "missing",
           "load_seconds", "generated_models", "DERIVED_INTS"]

HEADER_DIR = Path(__file__).resolve().parents[2] / "sim_models" / "systemc"
_DRIVER = HEADER_DIR / "samfuse_driver.cpp"
_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared")
_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}
#: the model table's entries the driver includes rather than writes out
_GENERATED = "samfuse_models.inc"
#: constructor arguments a model takes for each derived parameter (ir.DERIVED_PARAMS):
#: the dtype as a flag, and no bounds (an accumulator grows as it fills)
DERIVED_INTS = {"acc_bounds": 0, "fp": 1}


def generated_models() -> str:
    """The driver's model table entries for the primitives it does not list itself
    (docs/primitives.md, "Adding a primitive"): the class named as the Python actor,
    constructed from its id, then its passed and derived parameters (the catalogue's
    schema, as ``_systemc_child`` plans them)."""
    import re

    from ir import CATALOGUE
    from sim_models.python import ACTORS

    listed = set(re.findall(r'\{"(\w+)", model<', _DRIVER.read_text()))
    lines = []
    for op, prim in CATALOGUE.items():
        if op not in listed:
            ints = len(prim.passed_params) + sum(DERIVED_INTS[w] for w in prim.derived)
            lines.append(f'{{"{op}", from_ints<{ACTORS[op].__name__}>('
                         f'std::make_index_sequence<{ints}>{{}})}},')
    return "\n".join(lines) + "\n"


def _libsystemc() -> str | None:
    """Path of libsystemc.so: ``$SAMFUSE_LIBSYSTEMC``, Debian's multiarch path, ldconfig."""
    env = os.environ.get("SAMFUSE_LIBSYSTEMC")
    if env:
        return env if Path(env).exists() else None
    for cand in ("/usr/lib/x86_64-linux-gnu/libsystemc.so", "/usr/lib/libsystemc.so",
                 "/usr/local/lib/libsystemc.so"):
        if Path(cand).exists():
            return cand
    return ctypes.util.find_library("systemc")


def _cxx() -> str:
    return os.environ.get("CXX", "g++")


def missing() -> str | None:
    """Why the SystemC backend cannot run here, or ``None``."""
    if importlib.util.find_spec("cppyy") is None:
        return "cppyy is not installed (pip install 'samfuse[systemc]')"
    if shutil.which(_cxx()) is None:
        return "no C++ compiler (g++) to build the SystemC models"
    if _libsystemc() is None:
        return "libsystemc.so not found (apt install libsystemc-dev, or set SAMFUSE_LIBSYSTEMC)"
    if not (HEADER_DIR / "samfuse.h").exists():
        return f"samfuse SystemC headers missing from {HEADER_DIR}"
    return None


def cache_dir() -> Path:
    """Where compiled SystemC libraries live: ``$SAMFUSE_CACHE``, else ``$XDG_CACHE_HOME``,
    else ``~/.cache``, then ``samfuse/systemc`` (the temporary directory's
    ``samfuse-cache/systemc`` when that cannot be created)."""
    root = os.environ.get("SAMFUSE_CACHE") or os.environ.get("XDG_CACHE_HOME") \
        or str(Path.home() / ".cache")
    return Path(root) / "samfuse" / "systemc"


def _library_key(cxx: str, libsystemc: str) -> str:
    """Hash of everything the compiled library depends on."""
    h = hashlib.sha256()
    for path in sorted(HEADER_DIR.glob("samfuse*.[hc]*")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(generated_models().encode() + b"\0")
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    stat = os.stat(libsystemc)
    try:
        cppyy = importlib.metadata.version("cppyy")
    except importlib.metadata.PackageNotFoundError:
        cppyy = "none"
    for part in (shutil.which(cxx) or cxx, version, " ".join(_FLAGS),
                 os.path.realpath(libsystemc), f"{stat.st_size}:{stat.st_mtime_ns}", cppyy):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:16]


def models_library() -> Path:
    """The compiled models and driver, built on first use (says so on stderr).

    The file name carries the key, so a changed header or compiler builds a new library
    next to the old ones; the build writes a temporary file and renames it, under an
    exclusive lock, so processes starting together build it once."""
    cxx, libsystemc = _cxx(), _libsystemc()
    if libsystemc is None:
        raise RuntimeError(missing())
    lib = cache_dir() / f"libsamfuse_systemc_{_library_key(cxx, libsystemc)}.so"
    if lib.exists():
        return lib
    try:
        lib.parent.mkdir(parents=True, exist_ok=True)
    except OSError:  # no writable home: a per-machine cache in the temporary directory
        lib = Path(tempfile.gettempdir()) / "samfuse-cache" / "systemc" / lib.name
        if lib.exists():
            return lib
        lib.parent.mkdir(parents=True, exist_ok=True)
    with open(lib.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if lib.exists():  # built by another process meanwhile
            return lib
        _build(cxx, libsystemc, lib)
    return lib


def _build(cxx: str, libsystemc: str, lib: Path) -> None:
    print(f"samfuse: compiling the SystemC models into {lib} (once per header or "
          "compiler change, about 10-30 s)...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
        out = Path(tmp) / lib.name
        (Path(tmp) / _GENERATED).write_text(generated_models())
        cmd = [cxx, *_FLAGS, f"-I{HEADER_DIR}", f"-I{tmp}", "-o", str(out), str(_DRIVER),
               libsystemc, f"-Wl,-rpath,{Path(libsystemc).parent}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"compiling the SystemC models with {cxx} failed "
                               f"({' '.join(cmd)}):\n{proc.stderr}")
        os.replace(out, lib)
    print(f"samfuse: SystemC models compiled in {time.perf_counter() - start:.1f} s",
          file=sys.stderr, flush=True)


def _load_library() -> Any:
    """cppyy with the compiled library loaded (once per process)."""
    if "lib" not in _STATE:
        os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")
        lib = models_library()
        import cppyy  # noqa: PLC0415 - slow import, only when the backend is used

        cppyy.load_library(str(lib))
        _STATE["lib"] = lib
    import cppyy  # noqa: PLC0415

    return cppyy


def driver() -> Any:
    """The ``samfuse_driver`` C++ namespace (``cppyy.gbl.samfuse_driver``), loaded once:
    the compiled library plus the driver's declarations (no SystemC header is parsed)."""
    with _LOCK:
        if "driver" not in _STATE:
            start = time.perf_counter()
            cppyy = _load_library()
            cppyy.include(str(HEADER_DIR / "samfuse_driver.h"))
            _STATE["driver"] = cppyy.gbl.samfuse_driver
            _STATE["seconds"] = _STATE.get("seconds", 0.0) + time.perf_counter() - start
        return _STATE["driver"]


def load() -> Any:
    """The ``samfuse`` C++ namespace of the model classes (``cppyy.gbl.samfuse``), for
    code that builds modules itself: cppyy parses the headers (about a second) and
    compiles call wrappers; the models' code comes from the compiled library."""
    with _LOCK:
        if "ns" not in _STATE:
            start = time.perf_counter()
            cppyy = _load_library()
            cppyy.add_include_path(str(HEADER_DIR))
            cppyy.cppdef("#define SC_CPLUSPLUS 201703L")  # workaround 2 (also in the headers)
            cppyy.include("samfuse.h")
            _STATE["ns"] = cppyy.gbl.samfuse
            _STATE["seconds"] = _STATE.get("seconds", 0.0) + time.perf_counter() - start
        return _STATE["ns"]


def load_seconds() -> float:
    """Wall time loading took in this process (library build if any, load, parsing)."""
    return float(_STATE.get("seconds", 0.0))
