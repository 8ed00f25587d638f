"""The handover parser and the result tiers, as invariants over arbitrary answers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.agent.subagent.handover import Handover, parse_handover
from myrm_tui.agent.subagent.result import MAX_RESULT_TOKENS, SPILL_CHARS, distill
from myrm_tui.store.vault import Vault
from tests.hypothesis_profiles import examples

_item = (
    st.text(
        alphabet=st.characters(whitelist_categories=("L", "N"), whitelist_characters=" ./_"), min_size=1, max_size=30
    )
    .map(str.strip)
    .filter(lambda s: s and s.lower() not in {"none", "nothing", "n/a"})
)
_items = st.lists(_item, max_size=5)


def _chars(text: str) -> int:
    return max(1, len(text) // 4)  # a stand-in token counter: the invariant holds for any counter


@given(completed=_items, pending=_items, risks=_items, files=_items, prose=st.text(max_size=300))
@settings(max_examples=examples(150), deadline=None)
def test_a_written_block_parses_back_to_its_items(completed, pending, risks, files, prose):
    def section(name: str, items: list[str]) -> str:
        return f"{name}:\n" + ("".join(f"- {i}\n" for i in items) if items else "none\n")

    block = "<handover>\n" + "".join(
        section(n, v) for n, v in (("completed", completed), ("pending", pending), ("risks", risks), ("files", files))
    )
    answer, handover = parse_handover(f"{prose}\n{block}</handover>\n")
    assert handover.found
    assert (list(handover.completed), list(handover.pending), list(handover.risks)) == (completed, pending, risks)
    assert list(handover.files) == files or (not files and handover.files == ())
    assert "<handover>" not in answer


def test_loose_formats_parse() -> None:
    fenced = "Done.\n```handover\nCompleted: a, b\nRisks: none\nFiles: x.py\n```"
    _, handover = parse_handover(fenced)
    assert handover.completed == ("a", "b") and handover.risks == () and handover.files == ("x.py",)
    heading = "Summary.\n## Handover\n**Pending**:\n1. rerun\n2. fix flake"
    rest, handover = parse_handover(heading)
    assert rest == "Summary." and handover.pending == ("rerun", "fix flake")


@given(size=st.integers(min_value=0, max_value=120_000), seed=st.integers(0, 9))
@settings(max_examples=examples(60), deadline=None)
def test_every_result_fits_the_cap_and_big_ones_name_their_handle(tmp_path_factory, size, seed):
    vault = Vault(tmp_path_factory.mktemp("vault"))
    answer = "".join(f"line {seed}-{i}\n" for i in range(size // 10))[:size]
    done = distill("[header]", answer, Handover(files=("a.py",)), full_text=answer, vault=vault, count=_chars)
    assert _chars(done.content) <= MAX_RESULT_TOKENS
    assert "files: a.py" in done.content  # the handover survives every cut
    if len(answer) > SPILL_CHARS:
        assert done.tier == 2 and done.vault_handle and done.vault_handle in done.content
        assert vault.read_text(done.vault_handle) == answer
    else:
        assert done.vault_handle is None and (done.tier != 0 or answer.strip() in done.content)
