"""Tests of the claim mechanism (lecnotes.book.claims) and of the ledger extension."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lecnotes.book import claims


def test_passing_claim_is_recorded(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    claims.start_chapter("99_test")
    rec = claims.claim("x", "two is about two", measured=2.01, expected=2.0, tol=0.05)
    assert rec.passed
    assert "[PASS]" in capsys.readouterr().out
    data = json.loads((tmp_path / "99_test.json").read_text())
    assert data["chapter"] == "99_test"
    assert data["claims"][0]["label"] == "x" and data["claims"][0]["passed"] is True
    prov = claims.load_provenance()["99_test"]
    assert prov["digest"] == claims.package_digest() and prov["lecnotes"]


def test_failing_claim_raises_and_names_itself(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    claims.start_chapter("99_test")
    with pytest.raises(AssertionError, match="99_test:too-big"):
        claims.claim("too-big", "one is at most zero", measured=1.0, expected=0.0, relation="<=")
    data = json.loads((tmp_path / "99_test.json").read_text())
    assert data["claims"][0]["passed"] is False


@pytest.mark.parametrize(
    "relation, expected, measured, ok",
    [
        ("<=", 1.0, 0.5, True),
        ("<=", 1.0, 1.5, False),
        (">=", 1.0, 1.5, True),
        (">=", 1.0, 0.5, False),
        ("between", (0.0, 1.0), 0.5, True),
        ("between", (0.0, 1.0), 1.5, False),
    ],
)
def test_relations(relation, expected, measured, ok, tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    claims.start_chapter("99_rel")
    if ok:
        assert claims.claim("r", "s", measured, expected, relation=relation, display=False,
        why_wide="a unit test of the mechanism").passed
    else:
        with pytest.raises(claims.ClaimError):
            claims.claim("r", "s", measured, expected, relation=relation, display=False,
        why_wide="a unit test of the mechanism")


def test_nan_measurement_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    with pytest.raises(claims.ClaimError):
        claims.claim("nan", "s", float("nan"), 0.0, relation=">=", display=False)


def test_start_chapter_resets_and_relabel_replaces(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    claims.start_chapter("99_a")
    claims.claim("a", "s", 1.0, 1.0, tol=0.0, display=False)
    claims.claim("a", "s", 1.0, 1.0, tol=0.0, display=False)
    assert len(claims.load_records()["99_a"]) == 1
    claims.start_chapter("99_a")
    assert claims.load_records()["99_a"] == []


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(label="a", statement="s", measured=1.0, expected=1.0),  # approx needs tol
        dict(label="a", statement="s", measured=1.0, expected=1.0, tol=-1.0),
        dict(label="a", statement="s", measured=1.0, expected=1.0, relation="=="),
        dict(label="", statement="s", measured=1.0, expected=1.0, tol=1.0),
        dict(label="a", statement="", measured=1.0, expected=1.0, tol=1.0),
        dict(label="a", statement="s", measured="x", expected=1.0, tol=1.0),
        dict(label="a", statement="s", measured=1.0, expected=(2.0, 1.0), relation="between"),
        dict(label="a", statement="s", measured=1.0, expected=1.0, relation="between"),
    ],
)
def test_bad_input_raises_value_error(kwargs, tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    with pytest.raises(ValueError):
        claims.claim(display=False, **kwargs)


def test_package_digest_changes_with_the_sources(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    src = Path(claims.__file__).parents[1]  # the package root
    copy = tmp_path / "lecnotes"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
    digest = claims.package_digest()
    assert len(digest) == 16 and digest == claims.package_digest()
    monkeypatch.setattr(claims, "__file__", str(copy / "book" / "claims.py"))
    assert claims.package_digest() == digest  # same sources, other place
    changed = copy / "core" / "hermite.py"
    changed.write_text(changed.read_text() + "\n# changed\n")
    assert claims.package_digest() != digest


def test_old_list_records_still_load(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    (tmp_path / "99_old.json").write_text('[{"label": "a"}]')
    assert claims.load_records()["99_old"] == [{"label": "a"}]
    assert claims.load_provenance()["99_old"] == {}


def test_start_chapter_validates():
    with pytest.raises(ValueError):
        claims.start_chapter("")
    with pytest.raises(ValueError):
        claims.start_chapter("a/b")


def test_claims_dir_finds_the_book_root(tmp_path, monkeypatch):
    monkeypatch.delenv("LECNOTES_CLAIMS_DIR", raising=False)
    (tmp_path / "_config.yml").write_text("")
    (tmp_path / "_toc.yml").write_text("")
    sub = tmp_path / "lectures"
    sub.mkdir()
    monkeypatch.chdir(sub)
    assert claims.claims_dir() == tmp_path / "_build" / "claims"


def test_html_rendering_escapes():
    rec = claims.Claim("c", "l", "a < b", 1.0, 2.0, "approx", 1.0, True)
    assert "a &lt; b" in rec._repr_html_()


@pytest.mark.slow  # executes a notebook: make test-slow, not make check
def test_a_failing_claim_fails_a_notebook_run(tmp_path):
    """A broken claim in a notebook makes nbval (and so `make test`) fail, naming the claim."""
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            textwrap.dedent(
                """
                from lecnotes.book import claims
                claims.start_chapter("99_broken")
                claims.claim("deliberately-broken", "1 = 2", 1.0, 2.0, tol=0.1)
                """
            )
        )
    ]
    path = tmp_path / "broken.ipynb"
    nbformat.write(nb, path)
    env_claims = tmp_path / "claims"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval-lax",
         "--nbval-current-env", "-q", str(path), "-o", "addopts=", "-o", "testpaths="],
        capture_output=True, text=True, cwd=tmp_path,
        env={**__import__("os").environ, "LECNOTES_CLAIMS_DIR": str(env_claims)},
        timeout=120,
    )
    assert proc.returncode != 0
    assert "99_broken:deliberately-broken" in proc.stdout


@pytest.mark.slow  # executes a notebook: make test-slow, not make check
def test_a_blunt_claim_fails_a_notebook_run(tmp_path):
    """A claim wider than a quarter of its value without a stated reason fails the run (the
    strict build renders that execution, so it fails too), naming the claim and the rule."""
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(textwrap.dedent(
        """
        from lecnotes.book import claims
        claims.start_chapter("99_blunt")
        claims.claim("blunt", "a slope of 1 within 40%", 1.1, 1.0, tol=0.4, alternative=2.0)
        """))]
    path = tmp_path / "blunt.ipynb"
    nbformat.write(nb, path)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval-lax",
         "--nbval-current-env", "-q", str(path), "-o", "addopts=", "-o", "testpaths="],
        capture_output=True, text=True, cwd=tmp_path,
        env={**__import__("os").environ, "LECNOTES_CLAIMS_DIR": str(tmp_path / "claims")},
        timeout=120,
    )
    assert proc.returncode != 0
    assert "99_blunt:blunt" in proc.stdout and "TOO WIDE" in proc.stdout


def test_claim_mean_uses_a_student_t_interval(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    claims.start_chapter("99_test")
    values = [0.9, 1.1, 1.0, 1.2, 0.8]  # mean 1.0, sem 0.0707, t_4(0.995) = 4.604
    rec = claims.claim_mean("m", "mean one", values, 1.3, level=0.99, display=False,
        why_wide="a unit test of the mechanism")
    assert rec.tol == pytest.approx(4.604 * 0.0707107, rel=1e-3) and rec.passed
    with pytest.raises(AssertionError):  # 0.35 away is more than 0.3255
        claims.claim_mean("m2", "mean one", values, 1.35, level=0.99, display=False,
        why_wide="a unit test of the mechanism")
    rec = claims.claim_mean("m3", "mean one", values, 1.35, level=0.99, allowance=0.05,
                            display=False,
        why_wide="a unit test of the mechanism")
    assert rec.passed
    rec = claims.claim_mean("m4", "mean one", values, 1.6, display=False,
        why_wide="a unit test of the mechanism")  # default 0.999
    assert rec.tol == pytest.approx(8.610 * 0.0707107, rel=1e-3) and rec.passed
    assert rec.passed
    with pytest.raises(ValueError):
        claims.claim_mean("m4", "one seed", [1.0], 1.0)
    with pytest.raises(ValueError):
        claims.claim_mean("m5", "negative allowance", values, 1.0, allowance=-1)


def test_a_claim_without_power_fails_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    claims.start_chapter("99_test")
    # slope 0 (the text) against slope -1/2 (the competing d^(-1/2) decay): a tolerance of
    # 0.6 accepts both, so the claim certifies nothing
    with pytest.raises(AssertionError, match="NO POWER: the alternative -0.5"):
        claims.claim("flat", "independent of d", -0.02, 0.0, tol=0.6, alternative=-0.5,
                     display=False,
        why_wide="a unit test of the mechanism")
    rec = claims.load_records()["99_test"][-1]
    assert rec["powerless"] is True and rec["passed"] is False and rec["alternative"] == -0.5
    ok = claims.claim("flat2", "independent of d", -0.02, 0.0, tol=0.1, alternative=-0.5,
                      display=False,
        why_wide="a unit test of the mechanism")
    assert ok.passed and not ok.powerless and "alternative -0.5" in ok.line()
    for relation, expected, alt in [("<=", 1.0, 0.5), (">=", 0.0, 3.0), ("between", (0, 2), 1)]:
        with pytest.raises(AssertionError, match="NO POWER"):
            claims.claim("b", "bound", 0.5, expected, relation=relation, alternative=alt,
                         display=False,
        why_wide="a unit test of the mechanism")
    values = [0.9, 1.1, 1.0, 1.2, 0.8]  # interval 1.0 +- 0.61 at the default level 0.999
    with pytest.raises(AssertionError, match="NO POWER"):
        claims.claim_mean("m", "mean one", values, 1.0, alternative=1.6, display=False,
        why_wide="a unit test of the mechanism")
    assert claims.claim_mean("m", "mean one", values, 1.0, alternative=1.7, display=False,
        why_wide="a unit test of the mechanism").passed


def test_no_alternative_is_recorded_and_exclusive(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    claims.start_chapter("99_test")
    rec = claims.claim("e", "exact identity", 1.0, 1.0, tol=1e-12,
                       no_alternative="an algebraic identity", display=False)
    assert rec.no_alternative == "an algebraic identity"
    with pytest.raises(ValueError):
        claims.claim("e", "both", 1.0, 1.0, tol=1, alternative=0.0, no_alternative="x")
    with pytest.raises(ValueError):
        claims.claim("e", "blank reason", 1.0, 1.0, tol=1, no_alternative=" ")


def test_no_raise_mode_records_failures_for_robustness_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    monkeypatch.setenv(claims.NO_RAISE, "1")
    claims.start_chapter("99_test")
    rec = claims.claim("bad", "one is zero", 1.0, 0.0, tol=0.1, display=False)
    assert not rec.passed
    assert claims.load_records()["99_test"][0]["passed"] is False


def _records(n, failing=()):
    return [claims.Claim("06_x", f"c{i}", f"statement {i} <b>", 1.0, 1.0, "approx", 0.1,
                         i not in failing, alternative=2.0 if i == 0 else None) for i in range(n)]


def test_block_is_one_compact_linked_table():
    text = claims.block_html(_records(3))
    assert text.count("<details") == 1 and text.count("<tr id=") == 3
    assert " open" not in text.split(">", 1)[0]  # collapsed beyond two claims
    assert "3 checks hold" in text and 'id="claim-06_x-c1"' in text
    assert "claims-ledger.html#ledger-06_x-c2" in text
    assert "&lt;b&gt;" in text and "<b>" not in text  # statements are escaped
    assert "style=" not in text  # colours come from the stylesheet, for both themes
    two = claims.block_html(_records(2))
    assert " open>" in two.split("<summary>")[0]
    bad = claims.block_html(_records(4, failing=(2,)))
    assert "1 of 4 checks FAILS" in bad and "lecnotes-claims-fail" in bad and " open>" in bad
    assert claims.anchor("claim", "06_x", "a b/c") == "claim-06_x-a-b-c"


def test_claims_of_a_cell_are_shown_together(monkeypatch, tmp_path):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    shown, hooks = [], []

    class Events:
        def register(self, name, func):
            hooks.append((name, func))

    class Shell:
        events = Events()

    monkeypatch.setattr(claims, "_ipython", lambda: Shell)
    monkeypatch.setattr("IPython.display.display", lambda data, raw: shown.append(data))
    claims.start_chapter("99_test")
    claims.claim("a", "one", 1.0, 1.0, tol=0)
    claims.claim("b", "two", 2.0, 2.0, tol=0)
    assert not shown and [h[0] for h in hooks] == ["post_execute"]
    hooks[0][1]()  # the end of the cell
    assert len(shown) == 1 and "2 checks hold" in shown[0]["text/html"]
    assert shown[0]["text/plain"].count("[PASS]") == 2
    hooks[0][1]()  # a cell without claims shows nothing
    assert len(shown) == 1


def test_the_ledger_build_flags_a_claim_that_states_no_power():
    """The strict build fails on a claim with neither an alternative nor a reason (issue 16)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "book" / "_ext" / "claims_ledger.py"
    spec = importlib.util.spec_from_file_location("claims_ledger", path)
    ledger = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ledger)
    assert ledger.power_unstated({"alternative": None, "no_alternative": None})
    assert ledger.power_unstated({})
    assert not ledger.power_unstated({"alternative": 0.0})
    assert not ledger.power_unstated({"no_alternative": "an exact identity"})


# --- sources: the page of reproduced results (issue 26) ----------------------------------------
def _load_ext(name):
    import importlib.util
    import sys

    ext = Path(__file__).resolve().parents[2] / "book" / "_ext"
    sys.path.insert(0, str(ext))
    try:
        spec = importlib.util.spec_from_file_location(name, ext / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(ext))
    return mod


def test_a_claim_records_its_source(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path))
    claims.start_chapter("99_test")
    rec = claims.claim("s", "a theorem", 1.0, 1.0, tol=0.1, no_alternative="x",
                       source="dandi2024how", result="Theorem 1", display=False,
        why_wide="a unit test of the mechanism")
    assert (rec.source, rec.result, rec.status) == ("dandi2024how", "Theorem 1", "reproduced")
    saved = claims.load_records()["99_test"][0]
    assert saved["source"] == "dandi2024how" and saved["status"] == "reproduced"
    m = claims.claim_mean("m", "a mean", [1.0, 1.1, 0.9], 1.0, no_alternative="x",
                          source="ba2022high", status="finite-size correction", display=False,
        why_wide="a unit test of the mechanism")
    assert m.source == "ba2022high" and m.status == "finite-size correction"
    for bad in ({"source": "two words"}, {"result": "Theorem 1"}, {"status": "reproduced"},
                {"source": "k", "status": "almost"}):
        with pytest.raises(ValueError):
            claims.claim("b", "bad", 1.0, 1.0, tol=0.1, no_alternative="x", display=False, **bad)


def _sources_in_lectures():
    import re

    root = Path(__file__).resolve().parents[2]
    found = []
    for nb in sorted((root / "lectures").glob("[0-9][0-9]_*.ipynb")):
        found += [(nb.stem, k) for k in re.findall(r'source=\\"([^"\\]+)\\"', nb.read_text())]
    return found


def test_every_claim_source_is_in_the_bibliography():
    rep = _load_ext("reproductions")
    root = Path(__file__).resolve().parents[2]
    bib = rep.parse_bib((root / "book" / "references.bib").read_text())
    found = _sources_in_lectures()
    assert found, "no lecture names the source of a claim"
    missing = sorted({(stem, k) for stem, k in found if k not in bib})
    assert not missing, f"claim sources missing from book/references.bib: {missing}"
    assert rep.author_year(bib["dandi2024how"]).endswith("et al. (2024)")


def test_the_page_lists_every_sourced_claim():
    rep = _load_ext("reproductions")
    records = {"06_x": [{"label": "a", "source": "p1"}, {"label": "b"}],
               "07_y": [{"label": "c", "source": "p1"}, {"label": "d", "source": "p2"}]}
    grouped = rep.sourced(records)
    assert {k: [(s, r["label"]) for s, r in v] for k, v in grouped.items()} == {
        "p1": [("06_x", "a"), ("07_y", "c")], "p2": [("07_y", "d")]}
    table = "### 06_x\n\n| Claim | Roots |\n|---|---|\n| `a` | 4/5 | 1 | 2 |\n"
    assert rep.robustness_counts(table) == {("06_x", "a"): "4/5"}
    root = Path(__file__).resolve().parents[2]
    assert "reproductions" in (root / "_toc.yml").read_text()
    assert "{reproductions}" in (root / "book" / "reproductions.md").read_text()
