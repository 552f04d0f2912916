#!/usr/bin/env bash
# bench/run.py on a machine with no network (the device machine): synclint's dependencies and
# the two peers are installed from wheels carried in .whl/, the corpus is unpacked from the
# pinned wheels carried in bench/.corpus/wheels/. Fetch them here first:
#
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#       -d .whl libcst pathspec pyyaml
#   for t in torchfix==0.7.0 fixit==2.2.1; do python3 -m pip download --only-binary=:all: \
#       --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
#       --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
#       -d ".whl/peers/${t%%=*}" "$t"; done
#   .venv/bin/python -c "import sys; sys.path.insert(0, 'bench'); import corpus; corpus.fetch()"
#
# and run it with `.whl` and `bench/.corpus/wheels` carried. Arguments go to bench/run.py
# (default: --sample 8 --no-write). What it measured is copied to $OUT.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

python3 -m venv /tmp/synclint-bench-venv
/tmp/synclint-bench-venv/bin/python -m pip install -q --no-index --no-deps .whl/libcst-*.whl .whl/pathspec-*.whl .whl/pyyaml-*.whl
declare -A requirement=([torchfix]="torchfix==0.7.0" [fixit]="fixit==2.2.1")
for tool in torchfix fixit; do
    python3 -m venv "bench/.venvs/$tool"
    "bench/.venvs/$tool/bin/python" -m pip install -q --no-index --find-links ".whl/peers/$tool" "${requirement[$tool]}"
    echo "${requirement[$tool]}" > "bench/.venvs/$tool/.installed"  # what bench/tools.py checks
done
[ "$#" -gt 0 ] || set -- --sample 8 --no-write
status=0
/tmp/synclint-bench-venv/bin/python bench/run.py "$@" | tee "${OUT:-/tmp}/bench.txt" || status=$?
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT/out"
    cp bench/.corpus/out/*.json bench/.corpus/out/*.log "$OUT/out/" 2>/dev/null || true
    nproc > "$OUT/nproc.txt"; lscpu > "$OUT/lscpu.txt" 2>/dev/null || true
fi
exit "$status"
