"""The rule reference is generated from the docstrings, and a stale copy fails the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from synclint import docs
from synclint.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent


def test_committed_reference_is_current():
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == docs.render(), "docs/rules.md is stale: run `python -m synclint.docs`"


def test_every_rule_has_a_section_with_its_facts():
    text = docs.render()
    for rule in all_rules():
        heading = f"### {rule.code} {rule.name}\n"
        assert heading in text
        section = text.split(heading, 1)[1].split("\n### ", 1)[0]
        assert f"Fix: {rule.fix_availability.value}. Severity: {rule.severity.value}." in section
        assert "#### Why it stalls" in section and "#### Fix safety" in section
        assert f"](#{docs.anchor(rule)})" in text  # the table links to it
        assert f"### {rule.code} {rule.name}" in text and docs.anchor(rule) == f"{rule.code.lower()}-{rule.name}"


def test_check_flags_a_stale_file_and_writing_fixes_it(tmp_path):
    out = tmp_path / "rules.md"
    out.write_text("# an old reference\n", encoding="utf-8")
    command = [sys.executable, "-m", "synclint.docs", "--output", str(out)]
    stale = subprocess.run([*command, "--check"], capture_output=True, text=True, cwd=ROOT)
    assert stale.returncode == 1 and "stale" in stale.stderr
    assert out.read_text(encoding="utf-8") == "# an old reference\n"  # --check writes nothing
    assert subprocess.run(command, capture_output=True, text=True, cwd=ROOT).returncode == 0
    assert out.read_text(encoding="utf-8") == docs.render()
    assert subprocess.run([*command, "--check"], capture_output=True, text=True, cwd=ROOT).returncode == 0


def test_a_missing_file_is_stale(tmp_path):
    assert docs.main(["--output", str(tmp_path / "missing.md"), "--check"]) == 1
    assert not (tmp_path / "missing.md").exists()


def test_the_reference_stands_alone():
    """docs/rules.md cites nothing outside the repository: every relative link resolves to a
    file of the repository and no path leaves it."""
    import re

    text = docs.render()
    assert "shared/" not in text and "gpu-facts" not in text and "../" not in text
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        assert not target.startswith("http"), target
        assert (ROOT / "docs" / target).is_file(), target


def test_default_allow_contexts_exist_or_are_documented_as_a_projects_convention():
    """Every dotted default allow-context names something that exists (synclint's own
    tracer context); an undotted one would be a project's convention, which the README names."""
    import importlib

    from synclint.config import DEFAULT_ALLOW_CONTEXTS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in DEFAULT_ALLOW_CONTEXTS:
        if "." in name:
            module, _, attr = name.rpartition(".")
            assert hasattr(importlib.import_module(module), attr), name
        else:
            assert f"`{name}` is vLLM's convention" in readme
    assert "torch.no_sync_check" not in readme


def test_no_doc_cites_a_file_outside_the_repository():
    """The README and every page under docs/ (docs/history/ too) stand alone: no path out of
    the repository and no measurement notes kept elsewhere."""
    import re

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for marker in ("gpu-facts", "shared/", "/work/", "../"):
            assert marker not in text, f"{page.name} mentions {marker}"
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if not target.startswith(("http://", "https://", "mailto:")):
                assert (page.parent / target).exists(), f"{page.name} links to {target}, which is not in the repository"


def test_code_and_fixtures_cite_nothing_outside_the_repository():
    """Comments and docstrings point to the repository's own docs, not to notes kept elsewhere."""
    for folder in ("synclint", "fixtures"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert "gpu-facts" not in text and "/work/shared" not in text, path.relative_to(ROOT)
