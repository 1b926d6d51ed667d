"""Tests of lecnotes.core.scale: the size knob LECNOTES_SCALE."""

import pytest

from lecnotes.core import scale as S

CHAPTERS = ()  # core, used by every chapter; make check runs it


def test_default_is_one_and_scale_one_keeps_every_size(monkeypatch):
    monkeypatch.delenv(S.SCALE_ENV, raising=False)
    assert S.scale() == 1.0
    assert S.scaled(200) == 200 and S.scaled([50, 100, 400]) == [50, 100, 400]
    assert S.scaled(300, cap=100) == 300  # a cap never cuts a chapter's own size


def test_scale_two_doubles_sizes_and_respects_caps(monkeypatch):
    monkeypatch.setenv(S.SCALE_ENV, "2")
    assert S.scale() == 2.0
    assert S.scaled(200) == 400 and S.scaled([50, 100]) == [100, 200]
    assert S.scaled(200, cap=300) == 300 and S.capped(200, cap=300)
    assert not S.capped(100, cap=300)
    assert S.scaled(50, multiple=4) == 100 and S.scaled(52, multiple=8) == 104
    assert S.scaled(3, factor=1.5) == 4


@pytest.mark.parametrize("raw", ["0", "-1", "nan", "inf", "two"])
def test_bad_scale_is_a_clear_error(monkeypatch, raw):
    monkeypatch.setenv(S.SCALE_ENV, raw)
    with pytest.raises(ValueError, match=S.SCALE_ENV):
        S.scale()


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10"])
def test_bad_size_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="size"):
        S.scaled(bad, factor=1.0)
