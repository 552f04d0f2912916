"""synclint/analysis/receivers.py: which classes a call by name cannot reach, from the words
the calls' objects are named by."""

from __future__ import annotations

from synclint.analysis import receivers

CANDIDATES = {
    "GatedMarkovHead": frozenset({"gated", "markov", "head"}),
    "LoRAManager": frozenset({"manager"}),
    "IndexerKPool": frozenset({"indexer", "pool"}),
}


def test_a_word_one_family_has_leaves_out_the_others():
    assert receivers.unreached({"head"}, CANDIDATES, False) == {"LoRAManager", "IndexerKPool"}


def test_words_of_two_families_leave_out_only_the_third():
    assert receivers.unreached({"head", "pool"}, CANDIDATES, False) == {"LoRAManager"}


def test_a_word_no_candidate_has_may_be_any_of_them():
    assert receivers.unreached({"head", "runner"}, CANDIDATES, False) == set()
    assert receivers.unreached({"runner"}, CANDIDATES, False) == set()


def test_a_call_on_anything_but_a_name_may_be_any_of_them():
    assert receivers.unreached({"head", ""}, CANDIDATES, False) == set()
    assert receivers.unreached(set(), CANDIDATES, False) == set()


def test_the_words_of_every_family_given_once_answer_the_same():
    named = frozenset().union(*CANDIDATES.values())
    for words in ({"head"}, {"head", "pool"}, {"runner"}, {"manager", "indexer"}):
        assert receivers.unreached(words, CANDIDATES, False, named) == receivers.unreached(words, CANDIDATES, False)


def test_a_tensor_member_reaches_only_the_classes_a_word_names():
    assert receivers.unreached({"weight"}, CANDIDATES, True) == set(CANDIDATES)
    assert receivers.unreached({"head"}, CANDIDATES, True) == {"LoRAManager", "IndexerKPool"}
