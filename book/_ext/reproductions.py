"""The page of reproduced results: which published result each sourced claim checks.

A claim may name its ``source``, the bibliography key of the paper whose result it checks
(``lecnotes.book.claims.claim(..., source=, result=, status=)``). The ``reproductions`` directive is
filled, like the claims ledger and from the same records, in the write phase: per paper of
``book/references.bib`` that a claim names, its results with chapter, claim, measured and
predicted values, status and the robustness count of ``book/robustness.md``; then the papers
the lectures cite with no checked result. A source key missing from the bibliography is a
build warning (an error under ``-W``).
"""

from __future__ import annotations

import re
from pathlib import Path

from claims_ledger import _fmt, _load, _reference, _table
from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from lecnotes.book import claims

logger = logging.getLogger(__name__)


class reproductions_placeholder(nodes.General, nodes.Element):
    pass


class ReproductionsDirective(SphinxDirective):
    has_content = False

    def run(self):
        return [reproductions_placeholder()]


def parse_bib(text: str) -> dict[str, dict[str, str]]:
    """Entries of a BibTeX file: key -> {field: value} (braces removed; enough for our file)."""
    out = {}
    for m in re.finditer(r"@\w+\s*\{\s*([^,\s]+)\s*,(.*?)\n\}", text, flags=re.S):
        fields = {}
        for f in re.finditer(r"(\w+)\s*=\s*\{(.*?)\}\s*,?\s*$", m.group(2), flags=re.M):
            fields[f.group(1).lower()] = re.sub(r"[{}]", "", f.group(2)).strip()
        out[m.group(1)] = fields
    return out


def author_year(entry: dict[str, str]) -> str:
    """'Dandi et al. (2024)' from a BibTeX entry."""
    names = [a.strip() for a in entry.get("author", "?").split(" and ")]
    last = [n.split(",")[0].strip() if "," in n else n.split()[-1] for n in names]
    who = last[0] if len(last) == 1 else (
        f"{last[0]} and {last[1]}" if len(last) == 2 else f"{last[0]} et al.")
    return f"{who} ({entry.get('year', '?')})"


def entry_url(entry: dict[str, str]) -> str | None:
    if entry.get("url"):
        return entry["url"]
    if entry.get("doi"):
        return "https://doi.org/" + entry["doi"]
    if entry.get("eprint"):
        return "https://arxiv.org/abs/" + entry["eprint"]
    return None


def robustness_counts(text: str) -> dict[tuple[str, str], str]:
    """(chapter stem, label) -> 'k/n' from the 'Every claim' tables of book/robustness.md."""
    out, stem = {}, None
    for line in text.splitlines():
        h = re.match(r"###\s+(\S+)", line)
        if h:
            stem = h.group(1)
            continue
        row = re.match(r"\|\s*`([^`:]+)`\s*\|\s*(\d+/\d+)\s*\|", line)
        if row and stem:
            out[(stem, row.group(1))] = row.group(2)
    return out


def cited_keys(lecture_dir: Path) -> set[str]:
    """Bibliography keys the lecture notebooks cite ({footcite}, {cite} roles)."""
    keys = set()
    for nb in sorted(lecture_dir.glob("[0-9][0-9]_*.ipynb")):
        for m in re.finditer(r"\{(?:foot)?cite(?::\w+)?\}`([^`]+)`", nb.read_text()):
            keys.update(k.strip() for k in m.group(1).split(","))
    return keys


def sourced(records: dict[str, list[dict]]) -> dict[str, list[tuple[str, dict]]]:
    """The sourced claims grouped by paper: key -> [(chapter stem, record), ...]."""
    out: dict[str, list[tuple[str, dict]]] = {}
    for stem in sorted(records):
        for rec in records[stem]:
            if rec.get("source"):
                out.setdefault(rec["source"], []).append((stem, rec))
    return out


def _resolve(app, doctree, docname):
    placeholders = list(doctree.findall(reproductions_placeholder))
    if not placeholders:
        return
    root = Path(app.srcdir)
    bib = parse_bib((root / "book" / "references.bib").read_text())
    rob_path = root / "book" / "robustness.md"
    robust = robustness_counts(rob_path.read_text()) if rob_path.exists() else {}
    records, _ = _load(app)
    by_paper = sourced(records)
    out = []
    n_results = 0
    for key in sorted(by_paper, key=lambda k: (author_year(bib.get(k, {})), k)):
        if key not in bib:
            logger.warning("reproductions: claim source %r is not in book/references.bib", key,
                           location=docname)
        entry = bib.get(key, {})
        head = nodes.paragraph(ids=[f"paper-{key}"])
        head += nodes.strong(text=author_year(entry))
        head += nodes.Text(" ")
        url = entry_url(entry)
        title = nodes.emphasis(text=entry.get("title", key))
        head += nodes.reference("", "", title, refuri=url) if url else title
        head += nodes.Text(f" [{key}]")
        out.append(head)
        rows = []
        for stem, rec in by_paper[key]:
            n_results += 1
            lec = f"lectures/{stem}"
            cell = nodes.paragraph()
            cell += nodes.reference(
                "", "", nodes.literal(text=f"{stem[:2]}:{rec['label']}"),
                refuri=app.builder.get_relative_uri(docname, lec)
                + "#" + claims.anchor("claim", stem, rec["label"]), internal=True)
            cell += nodes.Text(" " + rec["statement"])
            status = rec.get("status") or "reproduced"
            rows.append([rec.get("result") or "-", cell, _fmt(rec["measured"]),
                         _reference(rec), status if rec["passed"] else "FAILED",
                         robust.get((stem, rec["label"]), "not run")])
        out.append(_table(["Result", "Claim (chapter: label) and sizes", "Measured",
                           "Predicted", "Status", "Robustness"], rows,
                          [16, 44, 9, 13, 10, 8]))
    unchecked = sorted(cited_keys(root / "lectures") - set(by_paper),
                       key=lambda k: (author_year(bib.get(k, {})), k))
    summary = nodes.paragraph(
        text=f"{n_results} results of {len(by_paper)} papers are checked by claims; "
        f"{len(unchecked)} further works cited in the lectures have no checked result.")
    tail = [nodes.paragraph(text="Cited, with no result checked here:")]
    lst = nodes.bullet_list()
    for key in unchecked:
        entry = bib.get(key, {})
        item = nodes.paragraph(text=f"{author_year(entry)} {entry.get('title', key)} [{key}]")
        lst += nodes.list_item("", item)
    tail.append(lst)
    for ph in placeholders:
        ph.replace_self([summary, *out, *tail])


def _note_doc(app, doctree):
    if list(doctree.findall(reproductions_placeholder)):
        app.env.domaindata.setdefault("reproductions", {"docs": set()})["docs"].add(
            app.env.docname)


def _always_outdated(app, env, added, changed, removed):
    docs = env.domaindata.get("reproductions", {}).get("docs", set())
    return [d for d in env.found_docs if d in docs]


def setup(app):
    app.add_node(reproductions_placeholder)
    app.add_directive("reproductions", ReproductionsDirective)
    app.connect("doctree-read", _note_doc)
    app.connect("env-get-outdated", _always_outdated)
    app.connect("doctree-resolved", _resolve)
    return {"parallel_read_safe": False, "parallel_write_safe": True, "version": "1.0"}
