"""The Claims ledger: a page listing every claim of every chapter, from the same execution.

Each lecture notebook records its claims (``lecnotes.book.claims``) in
``<book root>/_build/claims/<notebook stem>.json`` while it executes. Notebooks execute in
Sphinx's read phase; this extension fills the ``claims-ledger`` directive in the write phase
(``doctree-resolved``), so the table reflects the execution that produced the pages.

Each row shows the claim's sharpness in words (``claims.sharpness_text``: what deviation it
detects, how far its alternative lies, its kind). The build warns (and so fails under ``-W``)
when a recorded claim failed (which includes a claim wider than a quarter of its reference
without a stated reason), when a lecture's ``alternative=`` is computed from the claim's
tolerance, t-factor or margin (``lecnotes.book.claim_rules``), when a lecture in the table
of contents has recorded no claim (a stale or partial ``_build``: run ``jupyter-book clean
.`` or build with ``--all``), and when a record was made with other ``lecnotes`` sources
than the ones being built (its provenance digest differs). Each chapter's
heading says which execution produced its claims.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from lecnotes.book import claim_rules, claims

logger = logging.getLogger(__name__)


class ledger_placeholder(nodes.General, nodes.Element):
    """Where the book-wide summary goes (filled in the write phase)."""


class chapter_placeholder(nodes.General, nodes.Element):
    """Where one chapter's claims go (``stem``: the lecture's notebook stem)."""


def _lecture_titles(app) -> list[tuple[str, str]]:
    """(stem, title) of every lecture of the table of contents, in reading order, read from
    the notebooks' first heading (the read phase has not parsed every lecture yet)."""
    out = []
    for line in (Path(app.srcdir) / "_toc.yml").read_text().splitlines():
        line = line.strip()
        if not line.startswith("- file: lectures/"):
            continue
        stem = line.split("lectures/", 1)[1].strip()
        title = stem
        try:
            nb = json.loads((Path(app.srcdir) / "lectures" / f"{stem}.ipynb").read_text())
            for cell in nb["cells"]:
                src = "".join(cell["source"]) if cell["cell_type"] == "markdown" else ""
                heading = next((x for x in src.splitlines() if x.startswith("# ")), None)
                if heading:
                    title = heading[2:].strip()
                    break
        except (OSError, ValueError, KeyError):
            pass
        out.append((stem, title))
    return out


class ClaimsLedgerDirective(SphinxDirective):
    """The summary, then a section per chapter (so that the page's contents list them), each
    holding a placeholder that the write phase fills with the chapter's claims."""

    has_content = False

    def run(self):
        self.env.note_dependency(str(_claims_dir(self.env.app)))
        out = [ledger_placeholder()]
        for stem, title in _lecture_titles(self.env.app):
            section = nodes.section(ids=[f"ledger-chapter-{stem}"], names=[f"ledger {stem}"])
            section += nodes.title(text=title)
            section += chapter_placeholder(stem=stem)
            out.append(section)
        return out


def _claims_dir(app) -> Path:
    env = os.environ.get("LECNOTES_CLAIMS_DIR")  # same rule as lecnotes.book.claims.claims_dir
    return Path(env) if env else Path(app.srcdir) / "_build" / "claims"


def _load(app) -> tuple[dict[str, list[dict]], dict[str, dict]]:
    d = _claims_dir(app)
    try:
        return claims.load_records(d), claims.load_provenance(d)
    except json.JSONDecodeError as err:
        logger.warning("claims ledger: cannot read the records in %s: %s", d, err)
        return {}, {}


def _provenance_text(prov: dict) -> str:
    if not prov:
        return "execution not recorded"
    text = f"executed {prov.get('executed', '?')} by {prov.get('executor', '?')}"
    text += f" with lecnotes {prov.get('lecnotes', '?')}"
    text += f" (sources {prov.get('digest', '?')}), Python {prov.get('python', '?')}"
    text += f", NumPy {prov.get('numpy', '?')}"
    if prov.get("blas_threads"):
        text += f", {prov['blas_threads']} BLAS thread(s)"
    return text


def _fmt(x):
    if x is None:
        return "-"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in x) + "]"
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if v == 0:
        return "0"
    return f"{v:.4g}" if 1e-3 <= abs(v) < 1e4 else f"{v:.3e}"


def _reference(rec):
    rel, exp, tol = rec["relation"], rec["expected"], rec.get("tol")
    if rel == "approx":
        return f"{_fmt(exp)} ± {_fmt(tol)}"
    if rel == "between":
        return f"in {_fmt(exp)}"
    return f"{rel} {_fmt(exp)}"


def _alternative(rec):
    """The competing prediction the claim rejects, or why none applies ("-" if not stated)."""
    if rec.get("alternative") is not None:
        text = _fmt(rec["alternative"])
        return text + (" (would pass too: no power)" if rec.get("powerless") else "")
    if rec.get("no_alternative"):
        return "none: " + rec["no_alternative"]
    return "-"


def _sharpness(rec) -> str:
    try:
        return claims.sharpness_text(rec)
    except (KeyError, TypeError, ValueError):
        return "-"


def source_warnings(notebook: Path) -> list[str]:
    """The build's warnings on a lecture's source: every ``alternative=`` computed from its
    claim's tolerance, t-factor or margin (:mod:`lecnotes.book.claim_rules`)."""
    if not notebook.is_file():
        return []
    return [f.line() for f in claim_rules.degenerate_alternatives(notebook)]


def power_unstated(rec) -> bool:
    """True when a claim names no alternative and gives no reason why none applies.

    Every claim must do one or the other (the claims-power standard of DESIGN.md): the build
    warns, so that the strict build (``-W``) fails and names the claim.
    """
    return rec.get("alternative") is None and not rec.get("no_alternative")


def _table(headers, rows, widths):
    table = nodes.table(classes=["claims-ledger"])
    tgroup = nodes.tgroup(cols=len(headers))
    table += tgroup
    for w in widths:
        tgroup += nodes.colspec(colwidth=w)
    thead = nodes.thead()
    tgroup += thead
    row = nodes.row()
    for h in headers:
        row += nodes.entry("", nodes.paragraph(text=h))
    thead += row
    tbody = nodes.tbody()
    tgroup += tbody
    for cells in rows:
        row = nodes.row()
        for c in cells:
            entry = nodes.entry()
            entry += c if isinstance(c, nodes.Node) else nodes.paragraph(text=str(c))
            row += entry
        tbody += row
    return table


def _lecture_docnames(env):
    return sorted(d for d in env.found_docs if d.startswith("lectures/"))


def _resolve(app, doctree, docname):
    placeholders = list(doctree.findall(ledger_placeholder))
    if not placeholders:
        return
    env = app.env
    records, prov = _load(app)
    digest = claims.package_digest()
    lectures = _lecture_docnames(env)
    chapters = {ph["stem"]: ph for ph in doctree.findall(chapter_placeholder)}
    n_total, n_fail, n_alt = 0, 0, 0
    for lec in lectures:
        stem = lec.split("/", 1)[1]
        recs = records.get(stem, [])
        if not recs:
            logger.warning(
                "claims ledger: lecture %s recorded no claim (stale _build? build with --all)",
                lec,
                location=docname,
            )
        made_with = prov.get(stem, {}).get("digest")
        if recs and made_with != digest:
            logger.warning(
                "claims ledger: the claims of %s were recorded with lecnotes sources %s, not "
                "the current %s (stale record: rebuild; the execution cache is keyed on the "
                "sources)", lec, made_with, digest, location=docname,
            )
        for line in source_warnings(Path(app.srcdir) / f"{lec}.ipynb"):
            logger.warning("claims ledger: %s", line, location=docname)
        rows, chapter_fail = [], 0
        for rec in recs:
            ok = bool(rec["passed"])
            if not ok:
                chapter_fail += 1
                logger.warning(
                    "claims ledger: claim %s:%s FAILED: %s (measured %s, expected %s)",
                    stem, rec["label"], rec["statement"], _fmt(rec["measured"]),
                    _reference(rec), location=docname,
                )
            if power_unstated(rec):
                logger.warning(
                    "claims ledger: claim %s:%s names no alternative and no reason why none "
                    "applies (pass alternative= or no_alternative= to claims.claim)",
                    stem, rec["label"], location=docname,
                )
            claim_cell = nodes.paragraph(ids=[claims.anchor("ledger", stem, rec["label"])])
            claim_cell += nodes.inline(
                text="\u2714 " if ok else "\u2718 FAIL ",
                classes=["ledger-pass" if ok else "ledger-fail"])
            uri = app.builder.get_relative_uri(docname, lec)
            claim_cell += nodes.reference(
                "", "", nodes.literal(text=rec["label"]),
                refuri=f"{uri}#{claims.anchor('claim', stem, rec['label'])}",
                internal=True, reftitle="the claim in its chapter")
            claim_cell += nodes.Text(" " + rec["statement"])
            rows.append([claim_cell, _fmt(rec["measured"]), _reference(rec),
                         _alternative(rec), _sharpness(rec)])
        n_total += len(rows)
        n_fail += chapter_fail
        n_alt += sum(rec.get("alternative") is not None for rec in recs)
        content = []
        line = nodes.paragraph()
        line += nodes.reference("", "the chapter", internal=True,
                                refuri=app.builder.get_relative_uri(docname, lec))
        line += nodes.Text(
            f": {len(rows)} claim{'s' * (len(rows) != 1)}, "
            f"{len(rows) - chapter_fail} hold{'s' * (len(rows) - chapter_fail == 1)}"
            + (f", {chapter_fail} FAIL" if chapter_fail else "") + ". "
            + _provenance_text(prov.get(stem, {})).capitalize()[:1]
            + _provenance_text(prov.get(stem, {}))[1:])
        content.append(line)
        if rows:
            # folded in a <details> (open when a claim fails); lecnotes.js opens it when a
            # link points at one of its rows
            opening = "<details open>" if chapter_fail else "<details>"
            content += [
                nodes.raw("", f'{opening}<summary class="ledger-summary">the {len(rows)} '
                          f"claims of this chapter</summary>", format="html"),
                _table(["Claim", "Measured", "Reference", "Alternative", "Sharpness"], rows,
                       [46, 10, 13, 12, 19]),
                nodes.raw("", "</details>", format="html"),
            ]
        if stem in chapters:
            chapters.pop(stem).replace_self(content)
    for ph in chapters.values():   # in the contents of the ledger page but not of the book
        ph.replace_self([])
    unknown = sorted(set(records) - {lec.split("/", 1)[1] for lec in lectures})
    for stem in unknown:
        logger.info("claims ledger: ignoring records of %s (not in the table of contents)", stem)
    summary = nodes.paragraph(
        text=f"{n_total} claims in {len(lectures)} chapter{'s' * (len(lectures) != 1)}: "
        f"{n_total - n_fail} hold, {n_fail} fail. {n_alt} name the value a competing "
        "explanation predicts, which their test rejects; the others say why no competing "
        "value applies (an exact identity, a bound from a theorem, an exact count). The "
        "last column says how sharp each check is: the deviation from its reference it "
        "detects (its tolerance relative to the reference) or, for a bound, how far inside "
        "the measurement lies; how many tolerances (or margins) away its alternative lies; "
        "and what the reference is (a limit, a finite-size statement, an exact identity, "
        "an illustration). The robustness page gathers the distribution over the book. "
        "Each chapter's table is folded under its heading."
    )
    for ph in placeholders:
        ph.replace_self([summary])


def _always_outdated(app, env, added, changed, removed):
    return [d for d in env.found_docs if _has_ledger(env, d)]


def _has_ledger(env, docname):
    return docname in env.domaindata.get("claims_ledger", {}).get("docs", set())


def _note_doc(app, doctree):
    if list(doctree.findall(ledger_placeholder)):
        data = app.env.domaindata.setdefault("claims_ledger", {"docs": set()})
        data["docs"].add(app.env.docname)


def _add_static(app):
    if app.builder.format == "html":
        app.config.html_static_path.append(str(Path(__file__).resolve().parents[1] / "_static"))


def setup(app):
    app.connect("builder-inited", _add_static)
    app.add_css_file("lecnotes.css")
    app.add_js_file("lecnotes.js")
    app.add_node(ledger_placeholder)
    app.add_node(chapter_placeholder)
    app.add_directive("claims-ledger", ClaimsLedgerDirective)
    app.connect("doctree-read", _note_doc)
    app.connect("env-get-outdated", _always_outdated)
    app.connect("doctree-resolved", _resolve)
    return {"parallel_read_safe": False, "parallel_write_safe": True, "version": "1.0"}
