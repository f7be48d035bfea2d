"""``samfuse calibrate``: fit the timing knobs to an RTL's cycles (docs/calibrate.md).

Runs the bundled kernel suite on an RTL (the reference RTL under ``--rtl-hw FILE``, the
stand-in for a Vitis export in tests), fits ``timing.<primitive>.latency|ii`` and
``fifo.latency`` so the Python model reproduces its cycles (``cosim.runs._calibrate``), and
writes ``calibrated.yaml`` (a hardware description ``--hw`` accepts), ``report.json`` and
``report.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ir import Hardware, HwError, load_hw
from sim_models.python import SimResult

from ..runs._calibrate import (
    FIFO_CHOICES,
    Fit,
    Kernel,
    Knobs,
    RtlDirError,
    bundled_suite,
    dir_runs,
    error_stats,
    export_rtl_dir,
    fit,
    rtl_runs,
    seed_from_traces,
    systemc_cycles,
)
from ..runs._calibrate import model_cycles as suite_model_cycles
from ..runs._csynth import CsynthError, seed_from_solution
from ..runs._files import path_arg

__all__ = ["add_calibrate_parser"]


def add_calibrate_parser(sub: argparse._SubParsersAction, error: type[Exception]) -> None:
    """Register ``calibrate``; ``error`` is the CLI's user-error class."""
    c = sub.add_parser("calibrate", help="fit the timing knobs so the models reproduce an "
                       "RTL's cycles (docs/calibrate.md)")
    rtl = c.add_mutually_exclusive_group(required=True)
    rtl.add_argument("--rtl-hw", metavar="NAME|FILE",
                     help="run the reference RTL under this hardware description (its "
                     "timing.* and fifo.latency knobs rendered): the stand-in for Vitis RTL")
    rtl.add_argument("--rtl-dir", metavar="DIR", type=path_arg,
                     help="a user's exported RTL per kernel (DIR/<kernel>/*.v|*.sv with "
                     "module <kernel>_top, the samfuse port convention; needs --hw; "
                     "docs/calibrate.md)")
    c.add_argument("--hw", metavar="NAME|FILE",
                   help="the hardware the model is calibrated on; its timing knobs are the "
                   "fit's 'before' (default: --rtl-hw's machine at the default knobs; "
                   "required with --rtl-dir: the machine the RTL was built for)")
    c.add_argument("--export-rtl-dir", metavar="DIR", type=path_arg,
                   help="with --rtl-hw: write its reference RTL for every suite kernel in "
                   "the --rtl-dir convention (DIR/<kernel>/) and stop, without fitting")
    c.add_argument("--suite-size", choices=("nightly", "small"), default="nightly",
                   help="the bundled suite's operand sizes (default nightly; 21 kernels "
                   "either way)")
    c.add_argument("--kernels", metavar="K,K,…",
                   help="only these kernels of the suite (names as report.md lists them)")
    c.add_argument("--vitis-solution", metavar="DIR", type=path_arg,
                   help="a Vitis HLS solution folder: seed the fit with each process's II "
                   "and pipeline depth from syn/report/*csynth.xml")
    c.add_argument("--simulator", choices=("icarus", "verilator"), default="icarus",
                   help="RTL simulator (default icarus)")
    c.add_argument("--max-latency", type=int, default=6, metavar="N",
                   help="largest latency tried per primitive kind (default 6)")
    c.add_argument("--max-ii", type=int, default=3, metavar="N",
                   help="largest II tried per primitive kind (default 3)")
    c.add_argument("--max-startup", type=int, default=8, metavar="N",
                   help="largest start-up tried per primitive kind (default 8; 0 fits no "
                   "start-up)")
    c.add_argument("--no-systemc", action="store_true",
                   help="skip re-running the suite on SystemC under calibrated.yaml (by "
                   "default its cycles are reported and must equal the Python model's)")
    c.add_argument("--out", metavar="DIR", type=path_arg, default=Path("calibrate/out"),
                   help="where calibrated.yaml, report.json and report.md go "
                   "(default calibrate/out)")
    c.set_defaults(func=lambda args: _run(args, error))


def _suite(args: argparse.Namespace, error: type[Exception]) -> list[Kernel]:
    suite = bundled_suite(args.suite_size)
    if not args.kernels:
        return suite
    want = [k.strip() for k in args.kernels.split(",") if k.strip()]
    names = [k.name for k in suite]
    unknown = [k for k in want if k not in names]
    if unknown:
        raise error(f"--kernels: unknown kernel {unknown[0]!r}; the suite has "
                    f"{', '.join(names)}")
    return [k for k in suite if k.name in want]


def _target(args: argparse.Namespace, suite: list[Kernel], error: type[Exception]
            ) -> tuple[list[SimResult], str]:
    """The RTL's traced runs per kernel and a description of the RTL."""
    def show(name: str) -> None:
        print(f"  rtl ({args.simulator}): {name}", file=sys.stderr, flush=True)

    if args.rtl_dir is not None:
        folder = Path(args.rtl_dir)
        if not folder.is_dir():
            raise error(f"--rtl-dir {str(folder)!r}: no such folder; expected one folder "
                        "per kernel (DIR/<kernel>/ with the Verilog of <kernel>_top; "
                        "docs/calibrate.md)")
        try:
            return (dir_runs(suite, folder, load_hw(args.hw), args.simulator, show),
                    f"RTL in {folder}")
        except RtlDirError as exc:
            raise error(str(exc)) from None
    hw = load_hw(args.rtl_hw)
    return rtl_runs(suite, hw, args.simulator, show), f"reference RTL under {args.rtl_hw}"


def _seeds(args: argparse.Namespace, suite: list[Kernel], runs: list[SimResult],
           base: Hardware, error: type[Exception]) -> list[Knobs]:
    """The fit's starting points: the synthesis report's knobs (``--vitis-solution``),
    then the knobs read off the RTL's FIFO recordings under each ``fifo.latency``."""
    seeds = []
    if args.vitis_solution is not None:
        try:
            lat, ii = seed_from_solution(args.vitis_solution)
        except CsynthError as exc:
            raise error(str(exc)) from None
        seeds.append(Knobs(lat, ii, "vitis"))
    return seeds + [seed_from_traces(suite, runs, f, base) for f in FIFO_CHOICES]


def _run(args: argparse.Namespace, error: type[Exception]) -> int:
    for flag, low in (("max_latency", 1), ("max_ii", 1), ("max_startup", 0)):
        if getattr(args, flag) < low:
            raise error(f"--{flag.replace('_', '-')} {getattr(args, flag)}: expected >= "
                        f"{low}")
    if args.rtl_dir is not None and not args.hw:
        raise error("--rtl-dir needs --hw: the machine the RTL was built for (its FIFO "
                    "depths and memory) at the knobs the fit starts from")
    suite = _suite(args, error)
    if args.export_rtl_dir is not None:
        if args.rtl_hw is None:
            raise error("--export-rtl-dir writes the reference RTL of --rtl-hw; give "
                        "--rtl-hw FILE")
        dirs = export_rtl_dir(suite, load_hw(args.rtl_hw), Path(args.export_rtl_dir))
        print(f"wrote the reference RTL under {args.rtl_hw} for {len(dirs)} kernels to "
              f"{args.export_rtl_dir}/<kernel>/ (run it with --rtl-dir)")
        return 0
    runs, rtl_what = _target(args, suite, error)
    target = [r.cycles for r in runs]
    base = load_hw(args.hw) if args.hw else at_default_knobs(load_hw(args.rtl_hw))
    before = suite_model_cycles(suite, base)
    seeds = _seeds(args, suite, runs, base, error)
    result = fit(suite, target, base, seeds, args.max_latency, args.max_ii,
                 progress=lambda msg: print(f"  fit: {msg}", file=sys.stderr, flush=True),
                 max_startup=args.max_startup)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    calibrated = base.with_overrides(result.knobs.overrides())
    (out / "calibrated.yaml").write_text(hardware_yaml(calibrated, rtl_what))
    report = _report(suite, target, before, result, rtl_what, args)
    if not args.no_systemc:
        _systemc_check(report, systemc_cycles(suite, calibrated))
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "report.md").write_text(_markdown(report))
    after = report["after"]
    print(f"calibrated {len(suite)} kernels against the {rtl_what}: mean |error| "
          f"{report['before']['mean_abs_error_pct']:.2f} % -> "
          f"{after['mean_abs_error_pct']:.2f} %, max {after['max_abs_error_pct']:.2f} %, "
          f"R² {after['r2']:.4f}; {_systemc_line(report)}; wrote "
          f"{out / 'calibrated.yaml'}, report.json, report.md")
    differ = [r["kernel"] for r in report["kernels"]
              if "systemc_after" in r and r["systemc_after"] != r["model_after"]]
    if differ:
        raise error(f"SystemC under calibrated.yaml differs from the Python model on "
                    f"{', '.join(differ)} (a samfuse bug: the backends must agree; "
                    f"report in {out})")
    return 0


def _systemc_check(report: dict[str, Any], cycles: list[int | None] | str) -> None:
    """SystemC's cycles under the calibrated hardware, per kernel, into the report."""
    if isinstance(cycles, str):
        report["systemc"] = f"not run: {cycles}"
        return
    for row, c in zip(report["kernels"], cycles, strict=True):
        row["systemc_after"] = c
    report["systemc"] = ("equals the Python model on every kernel"
                         if all(r["systemc_after"] == r["model_after"]
                                for r in report["kernels"]) else "differs from the Python model")


def _systemc_line(report: dict[str, Any]) -> str:
    return f"SystemC {report.get('systemc', 'not run (--no-systemc)')}"


def at_default_knobs(hw: Hardware) -> Hardware:
    """``hw`` with every timing knob it sets back at its default (the same machine as the
    contract's defaults see it)."""
    defaults = {"latency": 1, "ii": 1, "startup": 0}
    knobs = hw.to_dict().get("timing", {}).get("knobs", {})
    reset: dict[str, Any] = {f"timing.{k}": defaults[k.rsplit(".", 1)[1]] for k in knobs}
    if "latency" in hw.to_dict()["fifo"]:
        reset["fifo.latency"] = 1
    return hw.with_overrides(reset) if reset else hw


def hardware_yaml(hw: Hardware, source: str) -> str:
    """``hw`` as a hardware description file (``--hw`` reads it back: ``ir.load_hw``)."""
    import yaml

    data: dict[str, Any] = hw.to_dict()
    knobs = data.pop("timing", {}).get("knobs", {})
    nested: dict[str, dict[str, int]] = {}
    defaults = {"latency": 1, "ii": 1, "startup": 0}
    for key, value in sorted(knobs.items()):
        prim, knob = key.split(".")
        if value != defaults[knob]:
            nested.setdefault(prim, {})[knob] = value
    data["name"] = "calibrated"
    data["source"] = f"samfuse calibrate against the {source}"
    if nested:
        data["timing"] = nested
    text = yaml.safe_dump(data, sort_keys=False)
    try:  # a description that does not load back is a bug, not a user error
        load_hw_text(text)
    except HwError as exc:
        raise AssertionError(f"calibrated.yaml does not load back: {exc}") from None
    return "# written by samfuse calibrate (docs/calibrate.md)\n" + text


def load_hw_text(text: str) -> Hardware:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "calibrated.yaml"
        path.write_text(text)
        return load_hw(str(path))


def _report(suite: list[Kernel], target: list[int], before: list[int], result: Fit,
            rtl_what: str, args: argparse.Namespace) -> dict[str, Any]:
    rows = [{"kernel": k.name, "rtl_cycles": r, "model_before": b, "model_after": a,
             "error_before_pct": 100 * (b - r) / max(r, 1),
             "error_after_pct": 100 * (a - r) / max(r, 1)}
            for k, r, b, a in zip(suite, target, before, result.cycles, strict=True)]
    return {"rtl": rtl_what, "simulator": args.simulator,
            "hw": args.hw or f"{args.rtl_hw} at the default knobs",
            "suite_size": args.suite_size, "kernels": rows,
            "knobs": result.knobs.overrides(), "evaluations": result.evaluations,
            "seeded_from": ["rtl traces"] + ([str(args.vitis_solution)]
                                             if args.vitis_solution else []),
            "before": error_stats(before, target), "after": error_stats(result.cycles, target)}


def _markdown(report: dict[str, Any]) -> str:
    sc = "systemc_after" in (report["kernels"] or [{}])[0]
    lines = [f"# Calibration against the {report['rtl']}", "",
             f"Simulator {report['simulator']}; model hardware {report['hw']}; "
             f"{len(report['kernels'])} kernels ({report['suite_size']}); "
             f"{report['evaluations']} kernel simulations in the fit; "
             f"{_systemc_line(report)}.", "",
             "| kernel | RTL cycles | model before | error before | model after | "
             "error after |" + (" SystemC after |" if sc else ""),
             "|---|---:|---:|---:|---:|---:|" + ("---:|" if sc else "")]
    for r in report["kernels"]:
        lines.append(f"| {r['kernel']} | {r['rtl_cycles']} | {r['model_before']} | "
                     f"{r['error_before_pct']:+.2f} % | {r['model_after']} | "
                     f"{r['error_after_pct']:+.2f} % |"
                     + (f" {r['systemc_after']} |" if sc else ""))
    lines += ["", "| | R² | mean abs error | max abs error |", "|---|---:|---:|---:|"]
    for when in ("before", "after"):
        s = report[when]
        lines.append(f"| {when} | {s['r2']:.4f} | {s['mean_abs_error_pct']:.2f} % | "
                     f"{s['max_abs_error_pct']:.2f} % |")
    lines += ["", "Fitted knobs (hardware keys):", ""]
    lines += [f"- `{k}` = {v}" for k, v in report["knobs"].items()]
    return "\n".join(lines) + "\n"
