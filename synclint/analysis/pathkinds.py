"""Which files are tests and benchmarks, by folder and file name: read by the tiers
(synclint/analysis/tier.py) and by the repository index (synclint/repo/), which must not
import libcst for it (a warm run does not load libcst at all)."""

from __future__ import annotations

import re

# Folders and files of tests and benchmarks (path components, compared in lower case).
TEST_FOLDERS = frozenset({"tests", "test", "testing", "benchmarks", "benchmark", "bench", "benches"})
TEST_FILE = re.compile(r"^(test_.*|.*_test|conftest|testing|bench_.*|.*_bench|benchmark_.*|.*_benchmark|bench_utils|benchmark)\.pyi?$")

# Folders of vendored third-party code: a copy of another project, of which the repository
# uses what it calls (synclint/repo/: a vendored function nothing reaches is cold).
VENDORED_FOLDERS = frozenset({"third_party", "thirdparty", "3rdparty", "vendor", "vendored", "_vendor", "external", "extern"})
