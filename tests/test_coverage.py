"""The words every verdict's coverage is said in (posenc_gui.model.core.coverage)."""

import pytest

from posenc_gui.model.core.coverage import Coverage, Verdict, span


def test_a_span_names_its_ends_with_separators_and_one_number_for_one_element():
    assert span(0, 1023) == "0…1,023"
    assert span(7, 7) == "7"


def test_an_exact_coverage_is_proved_and_says_so():
    cov = Coverage("offsets", 0, 65535)
    assert cov.proved and cov.covers(0, 65535) and not cov.covers(0, 65536)
    assert cov.phrase() == "proved over offsets 0…65,535"


def test_a_sampled_coverage_proves_nothing_and_says_how_many_it_checked():
    cov = Coverage("offsets", 0, 1_048_575, method="sampled", samples=512)
    assert not cov.proved and not cov.covers(0, 10)
    assert cov.phrase() == "checked on 512 sampled offsets in 0…1,048,575"


def test_a_maximum_says_what_it_was_taken_over():
    assert Coverage("positions", 0, 1023).extent() == "over positions 0…1,023"
    assert (Coverage("positions", 0, 1_048_575, method="sampled", samples=262_144).extent()
            == "over 262,144 sampled positions in 0…1,048,575")
    assert Coverage("offsets", 0, 99, method="bounded").extent() == "over offsets 0…99 (bounded between samples)"


def test_a_bounded_coverage_is_proved_between_its_samples():
    assert Coverage("offsets", 0, 99, method="bounded").covers(0, 99)
    assert "bounded between samples" in Coverage("offsets", 0, 99, method="bounded").phrase()


@pytest.mark.parametrize("kwargs, word", [
    (dict(method="guessed"), "method"), (dict(first=5, last=4), "last"), (dict(method="sampled"), "samples")])
def test_a_malformed_coverage_is_refused(kwargs, word):
    args = dict(quantity="positions", first=0, last=9) | kwargs
    with pytest.raises(ValueError, match=word):
        Coverage(**args)


def test_a_check_needs_the_whole_claimed_range_proved():
    whole = Verdict(True, Coverage("positions", 0, 9_999), claim=(0, 9_999))
    part = Verdict(True, Coverage("positions", 0, 1_023), claim=(0, 9_999))
    sampled = Verdict(True, Coverage("positions", 0, 9_999, "sampled", samples=100), claim=(0, 9_999))
    assert whole.mark == "✓" and whole.cell("unique", "repeats") == "✓ unique: proved over positions 0…9,999"
    for verdict in (part, sampled):
        assert verdict.mark == "–" and "✓" not in verdict.cell("unique", "repeats")
    assert "0…1,023" in part.cell("unique", "repeats") and "0…9,999" in part.cell("unique", "repeats")


def test_a_cross_with_a_witness_is_settled_whatever_was_sampled():
    verdict = Verdict(False, Coverage("positions", 0, 9_999, "sampled", samples=10), claim=(0, 9_999),
                      witness="PE(0) = PE(4,096)")
    assert verdict.mark == "✗" and verdict.cell("unique", "repeats") == "✗ repeats (PE(0) = PE(4,096))"
    unwitnessed = Verdict(False, Coverage("positions", 0, 9, "sampled", samples=3), claim=(0, 9))
    assert unwitnessed.mark == "–"


def test_the_export_record_carries_the_coverage():
    record = Verdict(True, Coverage("keys n ≤ m", 0, 4_999), claim=(0, 4_999)).as_dict()
    assert record["mark"] == "✓" and record["coverage"]["proved"] and record["coverage"]["last"] == 4_999


def test_a_closed_form_proves_every_element_and_says_how():
    cov = Coverage("query and key positions", 0, 127, method="closed form")
    assert cov.proved and cov.covers(0, 127)
    assert cov.phrase() == "proved over query and key positions 0…127 (closed form)"
    assert cov.extent() == "over query and key positions 0…127 (closed form)"
    assert Verdict(True, cov, claim=(0, 127)).mark == "✓"
