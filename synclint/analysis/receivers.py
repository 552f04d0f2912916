"""What the name of the object a method is called on says of its class.

A call by name (`obj.m()`, `obj` of a class the code does not say) reaches every method `m`
of the repository. Code names its objects after their classes (`markov_head` holds a
`GatedMarkovHead`, `self._storage_attachment` a `StorageAttachment`, `indexer` an
`IndexerKPool`), so where the word the object's name ends in is a word of some candidate
class's name (or of a base's or a subclass's), the candidates of classes whose names lack it
are not what the call runs: `markov_head.init_state(h)` is a Markov head's `init_state`,
not a LoRA manager's.

A torch.Tensor member called by name (`ex.fc13.weight.detach()`, `z_q.detach()`,
`(z_q - z_e).detach()`) is torch's unless the object's word is a word of a candidate class:
`weight` names no `StorageAttachment`, and neither does a name too short to be a word or
an expression that is no name.
"""

from __future__ import annotations

import re

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z][a-z]*|[a-z]+")

# What an object of a `torch.nn.Module` class is called in any PyTorch code: every module
# class answers to these names (`self.model.compute_logits(h)` of a `LlamaForCausalLM`).
MODULE_WORDS = frozenset({"model", "module"})


def receiver_word(name: str) -> str:
    """The word an object's name ends in, lower case: `markov_head` -> `head`,
    `self._attn_backend` -> `backend`, `layer2` -> `layer`; "" for a word of fewer than three
    letters, which says nothing (`x`, `m`, `h`, `io`)."""
    parts = [p for p in name.strip("_").split("_") if p]
    if not parts:
        return ""
    word = parts[-1].rstrip("0123456789").lower()
    if len(word) < 3:
        return ""
    return word


def class_words(cls: str) -> set[str]:
    """The words of a class's name, lower case: `LoRAManager` -> lo, ra, manager;
    `IndexerKPool` -> indexer, k, pool; `MHATokenToKVPool` -> mha, token, to, kv, pool."""
    return {w.lower() for w in _WORDS.findall(cls.rpartition(".")[2])}


def family_words(lineage, descendants, module_class: bool) -> frozenset[str]:
    """The words an object of a class of this family may be named by: the words of the
    class's name, of each base's and of each subclass's (`self.scheduler` for a method a
    `SchedulerOutputMixin` defines and `Scheduler` inherits; `indexer` for an
    `IndexerKPool`), and `model` / `module` for a `torch.nn.Module` class."""
    words = set().union(*(class_words(one) for one in (*lineage, *descendants)))
    if module_class:
        words |= MODULE_WORDS
    return frozenset(w for w in words if len(w) >= 3)


def word_index(candidates: dict[str, frozenset[str]]) -> dict[str, set[str]]:
    """word -> the candidate classes whose family it names (`unreached`'s `naming`)."""
    naming: dict[str, set[str]] = {}
    for cls, words in candidates.items():
        for word in words:
            naming.setdefault(word, set()).add(cls)
    return naming


def unreached(receivers, candidates: dict[str, frozenset[str]], tensor_member: bool,
              named: frozenset[str] | None = None, naming: dict[str, set[str]] | None = None) -> set[str]:
    """The candidate classes a caller's calls by name of one method cannot reach, from the
    words its calls' objects end in (`receivers`; "" for a call on anything else, which
    may reach every candidate): a class no call's word names, where some candidate's family
    is named by each call. A torch.Tensor member (`detach`, `to`, `add`) reaches only the
    classes a call's word names: on anything else (`z_q.detach()`, `(z_q - z_e).detach()`,
    `h.to(device)`, `weight.detach()`) the call is torch's. `named` (every word of every
    candidate's family) and `naming` (`word_index(candidates)`), where given, are what the
    caller can work out once for all the callers of one method."""
    if naming is None:
        naming = word_index(candidates)
    if tensor_member:
        reached = set().union(*(naming.get(word, ()) for word in receivers if word))
        return set(candidates).difference(reached)
    if not receivers or "" in receivers:
        return set()
    if named is None:
        named = frozenset(naming)
    if not all(word in named for word in receivers):
        return set()  # a call whose object's word names no candidate: it may be any of them
    reached = set().union(*(naming.get(word, ()) for word in receivers))
    return set(candidates).difference(reached)
