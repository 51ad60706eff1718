"""ParamSpec: one declaration checks, parses and shows a parameter; Options: hashable, order-free."""

import math

import pytest

from posenc_gui.model import Options, ParamSpec

REAL = ParamSpec("base", "real", 10.0, "base", "h", low=1.0, high=1e12, low_open=True, log=True)
INT = ParamSpec("heads", "int", 8, "heads", "h", low=1, high=64)
CHOICE = ParamSpec("layout", "choice", "a", "layout", "h", choices=(("a", "A"), ("b", "B"), ("c", "C")))
FLAG = ParamSpec("causal", "bool", False, "causal", "h")


@pytest.mark.parametrize("spec, value, message", [
    (REAL, 1.0, "base must be > 1 and ≤ 1e+12, got 1.0"),
    (REAL, math.nan, "base must be > 1 and ≤ 1e+12"),
    (REAL, "10", "base must be a real number > 1 and ≤ 1e+12"),
    (INT, 65, "heads must be in 1…64, got 65"),
    (INT, 2.5, "heads must be an integer in 1…64"),
    (CHOICE, "d", "layout must be a, b or c; got 'd'"),
    (CHOICE, 1, "layout must be a, b or c"),
    (FLAG, 1, "causal must be true or false, got 1"),
])
def test_check_refuses_naming_the_parameter_and_its_range(spec, value, message):
    with pytest.raises(ValueError) as info:
        spec.check(value)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("spec, text, value", [
    (REAL, " 1e4 ", 10000.0), (INT, "1,024", None), (INT, "12", 12), (CHOICE, "b", "b"),
    (FLAG, "yes", True), (FLAG, "Off", False),
])
def test_parse_reads_typed_text_and_checks_it(spec, text, value):
    if value is None:
        with pytest.raises(ValueError, match="heads must be in 1…64, got 1024"):
            spec.parse(text)
    else:
        assert spec.parse(text) == value and type(spec.parse(text)) is type(value)


@pytest.mark.parametrize("spec, text, message", [
    (REAL, "abc", "base must be a number > 1 and ≤ 1e+12, got 'abc'"),
    (INT, "x", "heads must be an integer 1…64, got 'x'"),
    (CHOICE, "z", "layout must be one of a, b or c, got 'z'"),
    (FLAG, "maybe", "causal must be true or false, got 'maybe'"),
])
def test_parse_refuses_text_that_is_no_value(spec, text, message):
    with pytest.raises(ValueError) as info:
        spec.parse(text)
    assert str(info.value) == message


def test_a_spec_whose_default_it_refuses_is_an_error_at_declaration():
    with pytest.raises(ValueError, match="heads must be in 1…64, got 0"):
        ParamSpec("heads", "int", 0, "heads", "h", low=1, high=64)
    with pytest.raises(ValueError, match="needs choices"):
        ParamSpec("mode", "choice", "a", "mode", "h")


def test_texts_for_titles_and_file_names():
    assert (REAL.flag, INT.flag) == ("--base", "--heads")
    assert REAL.title_part(10000.0) == "base 10000" and INT.title_part(1024) == "heads 1,024"
    assert REAL.slug_part(2.5) == "b2.5" and CHOICE.slug_part("b") == "lb"
    assert CHOICE.choice_label("b") == "B" and FLAG.text(True) == "yes"


def test_options_compare_and_hash_by_content_not_by_order():
    first, second = Options({"a": 1, "b": 2.0}), Options({"b": 2.0, "a": 1})
    assert first == second and hash(first) == hash(second) and first == {"a": 1, "b": 2.0}
    assert first != Options({"a": 1, "b": 3.0}) and dict(first) == {"a": 1, "b": 2.0}
    assert {first: "cached"}[second] == "cached"
    with pytest.raises(TypeError):
        first["a"] = 5  # immutable


FACTORS = ParamSpec("factors", "reals", (), "factors", "One factor per pair.", low=0.0, high=100.0, low_open=True)


def test_a_list_of_numbers_is_checked_item_by_item_naming_the_item():
    assert FACTORS.check([1, 2.5]) == (1.0, 2.5) and FACTORS.check(()) == ()
    with pytest.raises(ValueError, match=r"factors\[1\] must be > 0"):
        FACTORS.check([1.0, 0.0])
    with pytest.raises(ValueError, match=r"factors must be a list of at most 4,096 numbers, each > 0 and ≤ 100"):
        FACTORS.check("1, 2")  # text is no list: parse reads text
    with pytest.raises(ValueError, match="got 4,097 numbers"):
        FACTORS.check([1.0] * 4097)
    with pytest.raises(ValueError, match=r"factors\[0\] must be > 0 and ≤ 100, got nan"):
        FACTORS.check([math.nan])


def test_a_list_of_numbers_is_typed_with_commas_or_spaces_and_shown_the_same_way():
    assert FACTORS.parse("1, 1.02  2.84") == (1.0, 1.02, 2.84)
    assert FACTORS.parse("  ") == ()
    assert FACTORS.text((1.0, 1.02, 2.84)) == "1, 1.02, 2.84"
    assert FACTORS.text((1.0, 64.83999633789062)) == "1, 64.83999633789062"  # every digit: it reads back the same
    assert FACTORS.parse(FACTORS.text((0.1, 64.83999633789062))) == (0.1, 64.83999633789062)
    with pytest.raises(ValueError, match="factors must be numbers separated by commas: a list of at most"):
        FACTORS.parse("1, two")
