#!/usr/bin/env bash
# All of synclint's GPU work in one command, for one CUDA machine (about 2-4 minutes):
#   1. `synclint prove`: every rule's proof case before and after synclint's own fix
#      (stall ratio, sync debug mode, same results), the throughput demo, and the runtime
#      tracer's proof on the same cases plus its overhead;
#   2. the `gpu`-marked pytest tests, and the CUDA tests of the H2D helper.
# Writes at most 8 flat files to $OUT (default ./gpu-proof-out) and prints a short summary.
# Needs torch with CUDA; libcst and pathspec importable (e.g. installed into /tmp/site with
# PYTHONPATH set). Usage: OUT=/some/dir scripts/gpu_proof.sh
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$REPO/gpu-proof-out}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
cd "$REPO"

{
    echo "date: $(date -u +%FT%TZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 4
    "$PY" -c 'import sys, torch, libcst; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(), "libcst", libcst.__version__ if hasattr(libcst, "__version__") else "?")'
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

start=$(date +%s)
timeout 420 "$PY" -m synclint prove \
    --json "$OUT/gpu-proof.json" --markdown "$OUT/gpu-proof.md" \
    --trace-markdown "$OUT/trace.md" --trace-json "$OUT/trace.json" > "$OUT/prove.log" 2>&1
prove_rc=$?
echo "== synclint prove: exit $prove_rc in $(( $(date +%s) - start )) s (log: prove.log)"
grep -v "^\s*$" "$OUT/prove.log" | tail -n 40

start=$(date +%s)
# Only the files that hold gpu-marked tests: the rest need test-only packages (jsonschema,
# pre-commit) that the GPU machine does not have, and hold nothing for it to run.
gpu_files=$(grep -l "pytest.mark.gpu" tests/*.py)
timeout 150 "$PY" -m pytest -q -m gpu -p no:cacheprovider $gpu_files > "$OUT/pytest-gpu.log" 2>&1
pytest_rc=$?
# CUDA tests of the H2D helper that the fixes call (skipped without CUDA, not marked gpu).
if [ -f tests/test_runtime_h2d.py ]; then
    echo "---- tests/test_runtime_h2d.py -k cuda" >> "$OUT/pytest-gpu.log"
    timeout 90 "$PY" -m pytest -q -k cuda -p no:cacheprovider tests/test_runtime_h2d.py >> "$OUT/pytest-gpu.log" 2>&1
    h2d_rc=$?
    [ "$h2d_rc" -ne 0 ] && [ "$h2d_rc" -ne 5 ] && pytest_rc=$h2d_rc
fi
echo "== pytest (gpu): exit $pytest_rc in $(( $(date +%s) - start )) s (log: pytest-gpu.log)"
grep -E "^(FAILED|ERROR)|^E   .*Error|[0-9]+ (passed|failed)" "$OUT/pytest-gpu.log" | tail -n 12

echo "== files in $OUT: $(ls "$OUT" | tr '\n' ' ')"
# Exit status: the proof's (1 = some rule failed its proof, which the reports explain).
exit $(( prove_rc != 0 ? prove_rc : pytest_rc ))
