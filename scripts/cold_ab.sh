#!/usr/bin/env bash
# An A/B of synclint's cold run on the bench sample: the code of an older commit (A) against
# this tree's (B), alternating, in one session, so that both meet the same machine state.
#
#   mkdir -p bench/.corpus/ab/old && git archive <commit> synclint | tar -x -C bench/.corpus/ab/old
#   scripts/cold_ab.sh [ROUNDS]            # default 3; PY=python with libcst (default: python3)
#
# On the device machine (no network, no git history of the commit), carry `bench/.corpus/ab`
# and `bench/.corpus/sample-8` (made by `bench/run.py --sample 8`) with `.whl`, and install
# libcst, pathspec and pyyaml from `.whl` into a virtualenv first (as scripts/bench_on_device.sh
# does). Both trees are compiled to bytecode first, as bench/run.py compiles its snapshot:
# where PYTHONDONTWRITEBYTECODE is set, a tree not compiled is compiled again by every process
# that imports it, and the A/B would measure that. Each cold run has an empty index store and
# an empty cache; the two reports must be identical.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${1:-3}
py=${PY:-python3}
old=$PWD/bench/.corpus/ab/old
corpus=bench/.corpus/sample-8
[ -d "$old/synclint" ] || { echo "no older tree in $old (see the header of $0)" >&2; exit 2; }
[ -d "$corpus" ] || { echo "no bench sample in $corpus: run bench/run.py --sample 8 first" >&2; exit 2; }
"$py" -m compileall -q "$old/synclint" synclint > /dev/null
reports=$(mktemp -d)
for round in $(seq "$rounds"); do
    for which in A B; do
        if [ "$which" = A ]; then code=$old; else code=$PWD; fi
        store=$(mktemp -d)
        cache=$(mktemp -d)
        TIMEFORMAT="round $round $which cold %R s (CPU %U s user + %S s system)"
        time (cd "$corpus" && SYNCLINT_INDEX_DIR=$store PYTHONPATH=$code "$py" -m synclint check . --exit-zero \
            --output-format concise --cache-dir "$cache" > "$reports/$which.txt")
        rm -rf "$store" "$cache"
    done
done
if cmp -s "$reports/A.txt" "$reports/B.txt"; then
    echo "the reports are identical ($(wc -l < "$reports/B.txt") lines)"
else
    echo "the reports differ:"
    diff "$reports/A.txt" "$reports/B.txt" | head -20
fi
rm -rf "$reports"
