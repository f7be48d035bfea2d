"""The Python model's compiled core: these very modules compiled by Cython, unchanged.

The pure-Python sources stay the reference; the compiled core is the same code as C
extension modules, built once (``scripts/setup.sh``, or ``_core.build()``) into the user
cache under a key of the sources' hash and the Python ABI, so an edited model never runs
stale code. At import, the package puts the
core's directory first on its ``__path__`` when a core for these exact sources exists.

``SAMFUSE_SIM_CORE`` chooses: ``auto`` (default: the compiled core if built, else pure),
``pure`` (never compiled), ``compiled`` (build it now if missing).
"""

from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
from pathlib import Path

__all__ = ["CORE_ENV", "activate", "build", "core_dir", "core_modules", "mode"]

CORE_ENV = "SAMFUSE_SIM_CORE"
_HERE = Path(__file__).resolve().parent
#: modules that stay pure Python: the package's door and this loader
_PURE = frozenset({"__init__.py", "_core.py"})
_EXT = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


class CoreError(RuntimeError):
    """The compiled core was asked for but cannot be built here."""


def core_modules() -> list[Path]:
    """The package's modules that the core compiles."""
    return sorted(p for p in _HERE.glob("*.py") if p.name not in _PURE)


def _declarations() -> list[Path]:
    """Cython's augmenting declarations (``_x.pxd`` beside ``_x.py``): the classes that
    become extension types with typed fields."""
    return sorted(_HERE.glob("*.pxd"))


def _key() -> str:
    h = hashlib.sha256(f"{sys.version}|{_EXT}".encode())
    for p in core_modules() + _declarations():
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _cache_root() -> Path:
    root = os.environ.get("SAMFUSE_CACHE") or os.environ.get("XDG_CACHE_HOME") \
        or str(Path.home() / ".cache")
    return Path(root) / "samfuse" / "simcore"


def core_dir() -> Path:
    """Where the core for the current sources lives (built or not)."""
    return _cache_root() / _key()


def _built(d: Path) -> bool:
    return all((d / (p.stem + _EXT)).is_file() for p in core_modules())


def mode() -> str:
    """The requested core: ``auto``, ``pure`` or ``compiled``."""
    m = os.environ.get(CORE_ENV, "auto") or "auto"
    if m not in ("auto", "pure", "compiled"):
        raise CoreError(f"{CORE_ENV}={m!r} is not a core choice; expected 'auto', 'pure' "
                        "or 'compiled'")
    return m


def activate(package_path: list[str]) -> str:
    """Put the compiled core first on the package's ``__path__`` when it is wanted and
    built (``compiled`` builds it); returns ``"compiled"`` or ``"pure"``."""
    m = mode()
    if m == "pure":
        return "pure"
    d = core_dir()
    if not _built(d):
        if m == "auto":
            return "pure"
        build(verbose=True)
    package_path.insert(0, str(d))
    return "compiled"


def build(verbose: bool = False) -> Path:
    """Compile the core for the current sources (a no-op when it exists)."""
    import shutil
    import subprocess
    import tempfile

    d = core_dir()
    if _built(d):
        return d
    try:
        import Cython  # noqa: F401
    except ImportError:
        raise CoreError("the compiled core needs Cython: pip install 'samfuse[fast]' (or "
                        f"set {CORE_ENV}=pure)") from None
    if verbose:
        print(f"samfuse: compiling the Python model's core into {d} (about a minute, "
              "once per change of the model)…", file=sys.stderr, flush=True)
    d.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=d.parent) as tmp:
        # the package layout gives the modules their full names (sim_models.python._x)
        pkg = Path(tmp, "sim_models", "python")
        pkg.mkdir(parents=True)
        Path(tmp, "sim_models", "__init__.py").write_text("")
        (pkg / "__init__.py").write_text("")
        for p in core_modules() + _declarations():
            shutil.copy2(p, pkg / p.name)
        cmd = [sys.executable, "-m", "Cython.Build.Cythonize", "-i", "-3", "-q", "-j", "2",
               *(str(pkg / p.name) for p in core_modules())]
        done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if done.returncode != 0:
            raise CoreError("compiling the Python model's core failed:\n"
                            + (done.stderr or done.stdout)[-2000:])
        out = Path(tmp, "out")
        out.mkdir()
        for p in core_modules():
            shutil.copy2(pkg / (p.stem + _EXT), out / (p.stem + _EXT))
        try:
            out.rename(d)
        except OSError:  # built meanwhile by another process
            if not _built(d):
                raise
    return d
