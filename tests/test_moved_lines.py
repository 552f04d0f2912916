"""Findings moved with their lines, and citations rewritten from the index's answers
(synclint/moved_lines.py): what may move, and what must make the file be linted again."""

from __future__ import annotations

from synclint import moved_lines


def plain(row, *, end_row=None, noqa_row=None, fix_rows=(), provenance=(), message="m", tier_reason=None):
    fix = None
    if fix_rows:
        fix = ("safe", "fix", tuple(("x", r, 1, r, 5) for r in fix_rows))
    return ("SL201", message, row, 5, end_row or row, 9, fix, "warning", 1, noqa_row, None, tuple(provenance), None, "hot",
            tier_reason, None)


LINES = ["import torch", "", "def f(t):", "    # a note", "    return t.item()", ""]


def test_comment_and_blank_lines_are_not_part_of_the_shape():
    shape = moved_lines.shape_of(LINES, "facts")
    assert shape.rows == (1, 3, 5)
    moved = ["# header", "", *LINES[:3], "", "    return t.item()"]
    assert moved_lines.shape_of(moved, "facts").digest == shape.digest
    assert moved_lines.shape_of(moved, "other facts").digest != shape.digest
    edited = [*LINES[:4], "    return t.sum().item()"]
    assert moved_lines.shape_of(edited, "facts").digest != shape.digest


def test_a_suppression_comment_counts_by_its_place_among_the_lines_of_code():
    base = moved_lines.shape_of(LINES, "f", [(5, "    return t.item()  # noqa")])
    shifted = moved_lines.shape_of(["", *LINES], "f", [(6, "    return t.item()  # noqa")])
    elsewhere = moved_lines.shape_of(["", *LINES], "f", [(4, "    return t.item()  # noqa")])
    assert base.digest == shifted.digest != elsewhere.digest


def test_every_cited_row_moves_with_its_line():
    shape = moved_lines.shape_of(LINES, "f")
    finding = plain(5, noqa_row=3, fix_rows=(5,), provenance=("line 3: `t: Tensor` -> device tensor", "an aside"))
    screened = moved_lines.encode("d", shape, (finding,))
    digest, shape_digest, places = moved_lines.decode(screened)
    assert (digest, shape_digest) == ("d", shape.digest)
    now = moved_lines.shape_of(["# new", "", *LINES], "f")
    (moved,) = moved_lines.moved((finding,), places, now.rows)
    assert (moved[2], moved[4], moved[9]) == (7, 7, 5)
    assert moved[6][2][0][1] == 7 and moved[6][2][0][3] == 7
    assert moved[11] == ("line 5: `t: Tensor` -> device tensor", "an aside")


def test_a_finding_citing_a_blank_row_keeps_no_shape():
    shape = moved_lines.shape_of(LINES, "f")
    # A fix inserting at row 2 (blank in the screened text) cannot be moved by its line.
    assert moved_lines.encode("d", shape, (plain(5, fix_rows=(2,)),)) == "d"
    assert moved_lines.decode("d") == ("d", "", {})


def test_a_row_without_a_place_now_is_not_moved():
    assert moved_lines.moved((plain(5),), {5: 2}, (1, 3)) is None
    assert moved_lines.moved((plain(5),), {3: 1}, (1, 3, 5)) is None


def test_answers_that_differ_only_in_their_cited_rows_have_one_loose_digest():
    before = {("p", "f", "t"): (1, "parameter `t` is given only device tensors (e.g. model.py:12)")}
    after = {("p", "f", "t"): (1, "parameter `t` is given only device tensors (e.g. model.py:14)")}
    other = {("p", "f", "t"): (1, "parameter `t` is given only device tensors (e.g. runner.py:12)")}
    assert moved_lines.loose_digest(before) == moved_lines.loose_digest(after) != moved_lines.loose_digest(other)


def test_citations_are_rewritten_from_the_answers_of_now():
    reason = "parameter `t` is given only device tensors (e.g. model.py:{})"
    finding = plain(5, provenance=(f"line 3: `t` -> device tensor ({reason.format(12)})",))
    (rewritten,) = moved_lines.recite((finding,), {("p", "f", "t"): (1, reason.format(14)), ("t", "f"): None})
    assert rewritten[11] == (f"line 3: `t` -> device tensor ({reason.format(14)})",)


def test_a_citation_no_answer_accounts_for_is_not_kept():
    finding = plain(5, provenance=("line 3: `t` -> device tensor (field `x` is assigned in model.py:12)",))
    answers = {("p", "f", "t"): (1, "parameter `t` is given only device tensors (e.g. model.py:14)")}
    assert moved_lines.recite((finding,), answers) is None
    uncited = plain(5, provenance=("line 3: `t` -> device tensor (annotated)",))
    assert moved_lines.recite((uncited,), answers) == (uncited,)


def test_two_answers_alike_but_for_their_rows_are_not_guessed_between():
    reason = "parameter `t` is given only device tensors (e.g. model.py:{})"
    finding = plain(5, provenance=(f"line 3: `t` -> device tensor ({reason.format(12)})",))
    answers = {("p", "f", "t"): (1, reason.format(14)), ("g", "f", "t"): (1, reason.format(20))}
    assert moved_lines.recite((finding,), answers) is None
