"""Tensor storage formats: one level type per storage level plus a mode order.

A format says how a tensor's modes are laid out as a fiber tree (SAM paper, Sec. 3):
storage level ``i`` holds tensor mode ``mode_order[i]`` and is either ``dense`` (every
coordinate present) or ``compressed`` (only coordinates with something below them).
Graphs, the simulators and the storage layer all name formats by the short letter form
(``"dc"``, ``"dc:1,0"``) that ``str(fmt)`` produces and :meth:`Format.parse` reads.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Format", "FormatError", "LEVEL_TYPES"]

LEVEL_TYPES = ("dense", "compressed")
_LETTER = {"dense": "d", "compressed": "c"}
_FROM_LETTER = {"d": "dense", "c": "compressed"}

# Named formats: name -> (letters or None for "one letter per mode", mode order or None,
# required ndim or None).
_NAMED: dict[str, tuple[str, tuple[int, ...] | None, int | None]] = {
    "dense": ("d", None, None),
    "coo": ("c", None, None),
    "sparse": ("c", None, None),
    "csr": ("dc", (0, 1), 2),
    "csc": ("dc", (1, 0), 2),
    "dcsr": ("cc", (0, 1), 2),
    "dcsc": ("cc", (1, 0), 2),
    "sparse_vec": ("c", (0,), 1),
    "sv": ("c", (0,), 1),
}


class FormatError(ValueError):
    """A format spec or Format that cannot describe the tensor it is meant for."""


@dataclass(frozen=True)
class Format:
    """Per-level types (``"dense"``/``"compressed"``) and the mode stored at each level.

    ``levels`` also accepts the letters ``"d"``/``"c"``; an empty ``mode_order`` means the
    identity order, so ``Format(("d", "c"))`` is CSR.
    """

    levels: tuple[str, ...]
    mode_order: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.levels, str):
            raise FormatError(f"Format levels must be a sequence of level types, not the "
                              f"string {self.levels!r}; use Format.parse({self.levels!r}, "
                              "ndim)")
        levels = tuple(_FROM_LETTER.get(lv, lv) for lv in self.levels)
        for lv in levels:
            if lv not in LEVEL_TYPES:
                raise FormatError(f"Format level type {lv!r}: expected one of "
                                  f"{LEVEL_TYPES} (or the letters 'd'/'c')")
        order = tuple(int(m) for m in self.mode_order) if self.mode_order else \
            tuple(range(len(levels)))
        if sorted(order) != list(range(len(levels))):
            raise FormatError(f"Format mode_order {order} is not a permutation of "
                              f"0..{len(levels) - 1} (one entry per level)")
        object.__setattr__(self, "levels", levels)
        object.__setattr__(self, "mode_order", order)

    # -- construction ------------------------------------------------------------------

    @classmethod
    def dense(cls, ndim: int) -> Format:
        """All-dense format of ``ndim`` modes in logical order."""
        return cls(("dense",) * ndim)

    @classmethod
    def compressed(cls, ndim: int) -> Format:
        """All-compressed (COO-like, "dcsr"-style) format of ``ndim`` modes."""
        return cls(("compressed",) * ndim)

    @classmethod
    def parse(cls, spec: str | Format, ndim: int) -> Format:
        """Read a format spec for an ``ndim``-mode tensor.

        Accepts names (``dense csr csc dcsr dcsc coo sparse sparse_vec sv``), one letter
        per level (``"dc"``, ``"cc"``, ``"dcc"``) and an optional mode order suffix
        (``"dc:1,0"``). A :class:`Format` is checked against ``ndim`` and returned.
        """
        if isinstance(spec, Format):
            if spec.ndim != ndim:
                raise FormatError(f"format {str(spec)!r} has {spec.ndim} levels but the "
                                  f"tensor is {ndim}-d")
            return spec
        if not isinstance(spec, str):
            raise FormatError(f"format spec {spec!r}: expected a string such as 'dc' or "
                              "'csr', or a Format")
        where = f"format {spec!r} for a {ndim}-d tensor"
        text = spec.strip().lower()
        body, sep, order_text = text.partition(":")
        body = body.strip()
        order: tuple[int, ...] | None = None
        if sep:
            try:
                order = tuple(int(p) for p in order_text.replace(" ", "").split(",") if p)
            except ValueError:
                raise FormatError(f"{where}: mode order after ':' must be comma-separated "
                                  f"integers such as '1,0', got {order_text.strip()!r}"
                                  ) from None
        if body in _NAMED:
            letters, named_order, need = _NAMED[body]
            if need is not None and need != ndim:
                raise FormatError(f"{where}: {body!r} is a {need}-d format")
            if named_order is not None and order is not None:
                raise FormatError(f"{where}: {body!r} fixes its own mode order; write "
                                  "level letters instead (e.g. 'dc:1,0')")
            if len(letters) == 1:
                letters = letters * ndim
            order = order if order is not None else named_order
        else:
            letters = body
            bad = sorted({ch for ch in letters if ch not in _FROM_LETTER})
            if bad:
                raise FormatError(f"{where}: level letters must be 'd' or 'c' (or a name: "
                                  f"{', '.join(_NAMED)}); found {''.join(bad)!r}")
            if len(letters) != ndim:
                raise FormatError(f"{where}: expected {ndim} level letters, one per mode, "
                                  f"got {len(letters)}")
        if order is not None and sorted(order) != list(range(ndim)):
            raise FormatError(f"{where}: mode order {order} is not a permutation of "
                              f"0..{ndim - 1}")
        return cls(tuple(_FROM_LETTER[ch] for ch in letters), order or ())

    # -- queries -----------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.levels)

    @property
    def letters(self) -> str:
        """The level types as letters, e.g. ``"dc"`` (no mode order)."""
        return "".join(_LETTER[lv] for lv in self.levels)

    @property
    def is_identity_order(self) -> bool:
        return self.mode_order == tuple(range(self.ndim))

    @property
    def all_dense(self) -> bool:
        return all(lv == "dense" for lv in self.levels)

    @property
    def all_compressed(self) -> bool:
        return all(lv == "compressed" for lv in self.levels)

    def is_dense(self, level: int) -> bool:
        return self.levels[level] == "dense"

    def is_compressed(self, level: int) -> bool:
        return self.levels[level] == "compressed"

    def level_of_mode(self, mode: int) -> int:
        """The storage level that holds tensor mode ``mode``."""
        return self.mode_order.index(mode)

    def __str__(self) -> str:
        if self.is_identity_order:
            return self.letters
        return f"{self.letters}:{','.join(map(str, self.mode_order))}"
