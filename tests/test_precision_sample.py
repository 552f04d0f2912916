"""scripts/precision_sample.py: the judged sample and the join of every default finding with
the verdicts the precision pages hold."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("precision_sample", ROOT / "scripts" / "precision_sample.py")
precision_sample = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(precision_sample)

NEWER = """
| n | finding | rule | tier | verdict | why |
|---:|---|---|---|---|---|
| 1 | `pkg/a.py:10` | SL201 | hot | cold | runs once per request |
"""
OLDER = """
| n | finding | rule | tier | verdict | why |
|---:|---|---|---|---|---|
| 1 | `pkg/a.py:10` | SL201 | hot | true | runs every step |
| 2 | SL202 | `pkg/b.py:3` | false | host data |
"""


def _finding(corpus: Path, path: str, row: int, code: str, tier: str = "hot", confidence: str = "medium") -> dict:
    return {"filename": str(corpus / path), "location": {"row": row, "column": 1}, "code": code,
            "tier": tier, "confidence": confidence, "message": "m"}


def test_the_newest_verdict_of_a_line_wins_and_old_rows_are_read():
    verdicts = precision_sample.known_verdicts([NEWER, OLDER])
    assert verdicts[("pkg/a.py", 10, "SL201")] == ("cold", "runs once per request")
    assert verdicts[("pkg/b.py", 3, "SL202")] == ("false", "host data")


def test_only_what_the_default_report_shows_is_joined():
    shown = precision_sample.shown_by_default
    assert shown({"tier": "hot", "confidence": "medium"}) and shown({"tier": "unknown", "confidence": "high"})
    assert not shown({"tier": "cold", "confidence": "high"})
    assert not shown({"tier": "hot", "confidence": "low"})


def test_a_salt_draws_another_order():
    keys = [("pkg/m.py", row, "SL101") for row in range(1, 41)]
    first = sorted(keys, key=lambda k: precision_sample.sample_key(*k))
    again = sorted(keys, key=lambda k: precision_sample.sample_key(*k))
    other = sorted(keys, key=lambda k: precision_sample.sample_key(*k, salt="another round"))
    assert first == again and first != other


def test_every_default_finding_is_counted_in_all_and_by_tier(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    report = tmp_path / "report.json"
    report.write_text(json.dumps([
        _finding(corpus, "pkg/a.py", 10, "SL201"),
        _finding(corpus, "pkg/b.py", 3, "SL202", tier="unknown"),
        _finding(corpus, "pkg/c.py", 7, "SL101", tier="unknown"),
        _finding(corpus, "pkg/d.py", 1, "SL101", tier="cold"),
        _finding(corpus, "pkg/e.py", 1, "SL101", confidence="low"),
    ]))
    pages = tmp_path / "verdicts.md"
    pages.write_text(NEWER + OLDER)
    assert precision_sample.main([str(report), str(corpus), "--all", "--verdicts", str(pages)]) == 0
    out, err = capsys.readouterr()
    rows = [line for line in out.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == 3  # the cold and the low finding are not in the default report
    assert "3 default findings; all 3: true 0, cold 1, false 1, not judged 1" in err
    assert "  hot: true 0, cold 1, false 0, not judged 0" in err
    assert "  unknown: true 0, cold 0, false 1, not judged 1" in err


def test_a_sample_takes_the_first_n_of_the_order(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    report = tmp_path / "report.json"
    report.write_text(json.dumps([_finding(corpus, "pkg/m.py", row, "SL101") for row in range(1, 11)]))
    pages = tmp_path / "verdicts.md"
    pages.write_text("")
    precision_sample.main([str(report), str(corpus), "--n", "4", "--salt", "s", "--verdicts", str(pages)])
    out, err = capsys.readouterr()
    drawn = [int(line.split("`")[1].rsplit(":", 1)[1]) for line in out.splitlines() if "`pkg/m.py:" in line]
    expected = sorted(range(1, 11), key=lambda row: precision_sample.sample_key("pkg/m.py", row, "SL101", salt="s"))[:4]
    assert drawn == expected
    assert "10 default findings; sample 4:" in err
