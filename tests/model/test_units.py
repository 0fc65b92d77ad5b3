"""solver.model.units: the one byte-size formatter."""

import pytest

from solver.model.units import format_size
from solver.simulate import parse_size


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [
        (1, "1"),
        (512, "512"),
        (1023, "1023"),
        (1024, "1K"),
        (1536, "1536"),  # not a whole number of K: the exact count, never rounded
        (256 << 10, "256K"),
        (1 << 20, "1M"),
        (3 << 20, "3M"),
        ((1 << 20) + (1 << 10), "1025K"),
        (4 << 30, "4G"),
        (2 << 40, "2T"),
    ],
)
def test_format_size(nbytes, text):
    assert format_size(nbytes) == text


@pytest.mark.parametrize("nbytes", [1, 7, 1000, 1024, 4096 + 1, 3 << 20, 5 << 30, (1 << 33) + 1024])
def test_format_size_parses_back(nbytes):
    assert parse_size(format_size(nbytes)) == nbytes


def test_format_size_accepts_integral_floats():
    assert format_size(float(1 << 30)) == "1G"


@pytest.mark.parametrize(
    ("gbps", "text"),
    [
        (266.6667, "266.7 GB/s"),
        (1.0, "1 GB/s"),
        (0.0512, "51.2 MB/s"),
        (0.000004, "4 KB/s"),
        (1500.0, "1.5 TB/s"),
        (float("nan"), "–"),
    ],
)
def test_format_rate_picks_the_unit_that_keeps_the_number_at_least_one(gbps, text):
    from solver.model.units import format_rate

    assert format_rate(gbps) == text
