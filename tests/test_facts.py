"""Reading engine flags: the last occurrence wins, as argparse takes it; numbers are ASCII and small."""

import pytest

from modelplane_render.facts.flags import find_flag, small_decimal


def test_the_last_occurrence_wins_in_either_spelling():  # type: ignore[no-untyped-def]
    assert find_flag(["--port=8001", "--port", "9000"], "--port") == (2, "9000")
    assert find_flag(["--port", "9000", "--port=8001"], "--port") == (2, "8001")
    assert find_flag(["--port"], "--port") == (0, None)
    assert find_flag(["--port-range=1"], "--port") is None


@pytest.mark.parametrize("text", ["8000", "0", "000000001", "999999999"])
def test_small_decimal_reads_up_to_nine_ascii_digits(text):  # type: ignore[no-untyped-def]
    assert small_decimal(text) == int(text)


# "²" and "٣" are digits to str.isdigit(); the 4,608-digit run is past int()'s limit (the fuzz found it).
@pytest.mark.parametrize("text", [None, "", "²", "٣", "1e3", "+1", "-1", " 1", "1\n", "1234567890", "80" * 2304])
def test_small_decimal_refuses_anything_else_without_raising(text):  # type: ignore[no-untyped-def]
    assert small_decimal(text) is None
