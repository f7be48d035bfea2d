"""Loading Debian's libsystemc and the samfuse SystemC headers into this process (cppyy).

Two workarounds make libsystemc usable from cppyy (see docs/systemc.md):

1. ``libsystemc.so`` has an undefined reference to ``sc_main`` (its own ``main`` calls
   it), so loading it fails unless a library defining ``sc_main`` is already loaded
   with ``RTLD_GLOBAL``. We build a one-line stub with g++ into a cache directory once.
2. The library is built as C++17 and its headers check that the including translation
   unit uses the same standard (``sc_api_version_2_3_4_cxx201703L``); cppyy's interpreter
   runs C++20, so ``SC_CPLUSPLUS`` must be defined as ``201703L`` before ``<systemc>``
   (the samfuse headers do this).

Loading is done once per process and costs a couple of seconds (cppyy's JIT compiles the
headers); it happens in the parent so that every forked simulation child inherits it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["HEADER_DIR", "load", "missing", "load_seconds"]

HEADER_DIR = Path(__file__).resolve().parent.parent / "sim_models" / "systemc"
_STUB_SOURCE = 'extern "C" int sc_main(int, char**) { return 0; }\n'
_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}


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


def missing() -> str | None:
    """Why the SystemC backend cannot run here, or ``None``."""
    if importlib.util.find_spec("cppyy") is None:
        return "cppyy is not installed (pip install 'samfuse[systemc]')"
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        return "no C++ compiler (g++) to build the sc_main stub"
    if _libsystemc() is None:
        return "libsystemc.so not found (apt install libsystemc-dev, or set SAMFUSE_LIBSYSTEMC)"
    if not (HEADER_DIR / "samfuse.h").exists():
        return f"samfuse SystemC headers missing from {HEADER_DIR}"
    return None


def _cache_dir() -> Path:
    root = os.environ.get("SAMFUSE_CACHE") or os.environ.get("XDG_CACHE_HOME") \
        or str(Path.home() / ".cache")
    return Path(root) / "samfuse" / "systemc"


def _stub_library() -> Path:
    """Build (once, atomically, keyed by source and compiler) the ``sc_main`` stub."""
    cxx = os.environ.get("CXX", "g++")
    key = hashlib.sha256((_STUB_SOURCE + cxx).encode()).hexdigest()[:12]
    lib = _cache_dir() / f"libsamfuse_scmain_{key}.so"
    if lib.exists():
        return lib
    lib.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
        src = Path(tmp) / "scmain.cpp"
        src.write_text(_STUB_SOURCE)
        out = Path(tmp) / lib.name
        proc = subprocess.run([cxx, "-shared", "-fPIC", "-O2", "-o", str(out), str(src)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"building the sc_main stub with {cxx} failed:\n{proc.stderr}")
        os.replace(out, lib)
    return lib


def load() -> Any:
    """The ``samfuse`` C++ namespace (``cppyy.gbl.samfuse``), loading everything once."""
    with _LOCK:
        if "ns" in _STATE:
            return _STATE["ns"]
        start = time.perf_counter()
        os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")
        ctypes.CDLL(str(_stub_library()), mode=ctypes.RTLD_GLOBAL)  # workaround 1
        import cppyy  # noqa: PLC0415 - slow import, only when the backend is used

        cppyy.load_library(_libsystemc())
        cppyy.add_include_path(str(HEADER_DIR))
        cppyy.cppdef("#define SC_CPLUSPLUS 201703L")  # workaround 2 (also in the headers)
        cppyy.include("samfuse.h")
        _STATE["ns"] = cppyy.gbl.samfuse
        _STATE["seconds"] = time.perf_counter() - start
        return _STATE["ns"]


def load_seconds() -> float:
    """Wall time the one-off load (stub build, library load, header JIT) took here."""
    return float(_STATE.get("seconds", 0.0))
