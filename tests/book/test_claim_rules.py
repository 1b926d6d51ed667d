"""The sharpness of claims (issue 57): the record, the words of the ledger, the build rules."""

import json
from pathlib import Path

import pytest

from lecnotes.book import claim_rules, claims

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def chapter(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    monkeypatch.delenv(claims.NO_RAISE, raising=False)
    claims.start_chapter("99_sharp")
    return tmp_path


def test_the_record_carries_resolution_distance_and_kind(chapter):
    rec = claims.claim("a", "s", 1.02, 1.0, tol=0.05, alternative=0.8, kind="limit",
                       display=False)
    assert rec.passed and rec.kind == "limit"
    assert rec.resolution == pytest.approx(0.05) and rec.alt_distance == pytest.approx(4.0)
    saved = claims.load_records()["99_sharp"][0]
    assert saved["resolution"] == pytest.approx(0.05) and saved["kind"] == "limit"
    text = claims.sharpness_text(saved)
    assert "5% of the reference" in text and "rejects 0.8 at 4 tolerances" in text
    assert "(limit)" in text


def test_one_sided_claims_record_their_margin(chapter):
    rec = claims.claim("b", "s", 1.5, 1.2, relation=">=", alternative=1.0, display=False)
    assert rec.resolution == pytest.approx(0.25)  # 0.3 inside a bound of 1.2
    assert rec.alt_distance == pytest.approx(0.2 / 0.3)
    text = claims.sharpness_text(json.loads(json.dumps(claims.asdict(rec))))
    assert "25% of the bound inside the bound" in text and "finite-size, inferred" in text


def test_a_blunt_claim_fails_unless_it_says_why(chapter):
    """The strict build's rule: wider than a quarter of its value needs a stated reason."""
    with pytest.raises(claims.ClaimError, match="TOO WIDE"):
        claims.claim("wide", "s", 1.0, 1.0, tol=0.3, alternative=0.0, display=False)
    assert not claims.load_records()["99_sharp"][-1]["passed"]
    rec = claims.claim("wide", "s", 1.0, 1.0, tol=0.3, alternative=0.0, kind="illustration",
                       why_wide="the sign is what matters here", display=False)
    assert rec.passed and not rec.blunt
    assert "wide because the sign" in claims.sharpness_text(claims.asdict(rec))
    # a zero reference has no relative width: the rule does not apply
    assert claims.claim("zero", "s", 0.01, 0.0, tol=0.3, alternative=1.0, display=False).passed


@pytest.mark.parametrize("bad", [None, "", 3])
def test_kind_and_why_wide_are_validated(chapter, bad):
    with pytest.raises(ValueError):
        claims.claim("k", "s", 1.0, 1.0, tol=0.1, kind=bad or "a law", display=False)
    with pytest.raises(ValueError):
        claims.claim("k", "s", 1.0, 1.0, tol=0.1, why_wide=bad, display=False) \
            if bad is not None else claims.claim("k", "s", 1.0, 1.0, tol=0.1, why_wide=" ",
                                                 display=False)


def _notebook(tmp_path, *sources):
    nb = {"cells": [{"cell_type": "code", "source": s, "metadata": {}, "outputs": [],
                     "execution_count": None} for s in sources],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "99_rules.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_the_static_rule_flags_alternatives_built_from_the_tolerance(tmp_path):
    path = _notebook(
        tmp_path,
        "%matplotlib inline\nt10 = stats.t_factor(10)\nlo = g - t10 * se",
        'claims.claim("a", "s", measured=lo, expected=0.0, relation=">=", '
        "alternative=-t10 * se)",
        'claim("b", "s", est, 0.0, relation=">=", alternative=-margin)',
        'claims.claim("c", "s", x, 1.0, tol=t * se_x, alternative=1.0 + se_x)',
        'claims.claim_mean("d", "s", v, 1.0, alternative=-stats.t_factor(4) * s)',
        # honest forms: the competitor's own value, and a tolerance relative to the reference
        'claims.claim("e", "s", measured=g, expected=t10 * se, relation=">=", '
        "alternative=0.0)",
        'claims.claim("f", "s", x, lim.constant, tol=0.1 * lim.constant, '
        "alternative=lim.other)",
    )
    found = {f.label: f for f in claim_rules.degenerate_alternatives(path)}
    assert sorted(found) == ["a", "b", "c", "d"]
    assert "t10" in found["a"].reason and "margin" in found["b"].reason
    assert "tolerance" in found["c"].reason and "t_factor" in found["d"].reason
    assert "nearest competing explanation" in found["a"].line()


def test_the_static_rule_follows_quantiles_loops_functions_and_spread_keywords(tmp_path):
    """The evasions a cold review found (review 10, finding 5): a t-factor written as a
    quantile, carried by a loop variable or returned by a helper, and keywords the rule cannot
    read; an honest loop and an honest helper stay unflagged."""
    path = _notebook(
        tmp_path,
        "tq = scipy.stats.t.ppf(0.9995, 9)",
        'claims.claim("q", "s", m, 0.0, relation=">=", alternative=-tq * se)',
        "for tk in (stats.t_factor(8), stats.t_factor(16)):\n"
        '    claims.claim("l", "s", m, 0.0, relation=">=", alternative=m - tk * se)',
        "def bound(m, se, n):\n    return m - stats.t_factor(n) * se",
        'claims.claim("h", "s", m, 0.0, relation=">=", alternative=bound(m, se, 8))',
        'kw = dict(alternative=0.0)\nclaims.claim("k", "s", m, 1.0, tol=0.1, **kw)',
        "def competitor(d):\n    return 1 / np.sqrt(d)",
        "for d in dims:\n"
        '    claims.claim(f"ok-{d}", "s", m, 1.0, tol=0.1, alternative=competitor(d))',
    )
    found = {f.label: f for f in claim_rules.degenerate_alternatives(path)}
    assert sorted(found) == ["h", "k", "l", "q"]
    assert "tq" in found["q"].reason and "tk" in found["l"].reason
    assert "bound" in found["h"].reason and "**" in found["k"].reason


def test_the_static_rule_validates_its_input(tmp_path):
    with pytest.raises(ValueError):
        claim_rules.degenerate_alternatives(tmp_path / "missing.ipynb")


@pytest.mark.parametrize("notebook", sorted((ROOT / "lectures").glob("*.ipynb")),
                         ids=lambda p: p.stem)
def test_no_lecture_builds_an_alternative_from_its_tolerance(notebook):
    """The rule the strict build enforces (claims_ledger warns), checked without a build."""
    found = [f.line() for f in claim_rules.degenerate_alternatives(notebook)]
    assert not found, "\n".join(found)


def test_the_strict_build_warns_on_an_alternative_built_from_the_tolerance(tmp_path):
    """claims_ledger turns each finding into a build warning, which -W makes an error."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "claims_ledger", ROOT / "book" / "_ext" / "claims_ledger.py")
    ledger = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ledger)
    path = _notebook(tmp_path, 'claims.claim("a", "s", m, 0.0, relation=">=", '
                               "alternative=-margin)")
    warnings = ledger.source_warnings(path)
    assert len(warnings) == 1 and "'a'" in warnings[0] and "margin" in warnings[0]
    assert ledger.source_warnings(tmp_path / "absent.ipynb") == []
    rec = {"relation": "approx", "measured": 1.0, "expected": 1.0, "tol": 0.5,
           "alternative": 0.0, "why_wide": "w"}
    assert "50% of the reference" in ledger._sharpness(rec)
