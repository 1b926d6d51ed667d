"""The landscape: every sample-complexity exponent of the book side by side, from the claims.

A claim that measures how a sample size (or a step count, or a time) grows with the dimension
places itself on the map with ``landscape=`` (``lecnotes.book.landscape``). The ``landscape``
directive is filled, like the claims ledger and from the same records, in the write phase:
a summary (how many entries, how many agree with the theory's exponent within their
tolerance), one figure drawn at build time (theory against measured exponent, grouped by
target class; ``_images/landscape-exponents.png`` and its phone variant), an overview of
target class x method (blank where the book does not measure it), and one table per target
class with the theory's law and exponent, the measured exponent with its tolerance, and the
claim (linked, with its statement and sizes) and chapter.

The build warns (an error under ``-W``) when an entry's claim did not pass, and when a
quantity key is stated with two values (``lecnotes.book.landscape.duplicates``).
"""

from __future__ import annotations

import html
import math
import posixpath
from pathlib import Path

from claims_ledger import _fmt, _load, _reference, _table
from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from lecnotes.book import claims
from lecnotes.book import landscape as lmap
from lecnotes.book.landscape_figure import exponent_figure

logger = logging.getLogger(__name__)

FIGURE = "landscape-exponents.png"
PHONE = "landscape-exponents-phone.png"
BREAKPOINT = "(max-width: 760px)"  # as book/_ext/phone_figures.py


class landscape_placeholder(nodes.General, nodes.Element):
    pass


class class_placeholder(nodes.General, nodes.Element):
    """Where one target class's table goes (``cls``: the class)."""


class LandscapeDirective(SphinxDirective):
    """The summary, figure and overview, then a section per target class (so that the page's
    contents list them), each holding a placeholder that the write phase fills."""

    has_content = False

    def run(self):
        out = [landscape_placeholder()]
        for cls in lmap.TARGET_CLASSES:
            section = nodes.section(ids=[f"landscape-{cls.replace(' ', '-')}"],
                                    names=[f"landscape {cls}"])
            section += nodes.title(text=cls[0].upper() + cls[1:])
            section += class_placeholder(cls=cls)
            out.append(section)
        return out


def _measured(e: lmap.Entry) -> str:
    rec, how = e.record, e.landscape["measures"]
    if how == "exponent":
        text = f"{_fmt(rec['measured'])}; claim: {_reference(rec)}"
        if rec["relation"] == "approx" and not math.isclose(float(rec["expected"]),
                                                             e.theory[0], abs_tol=1e-9):
            text += " (finite-size reference)"
        return text
    if how == "deviation":
        return f"largest |fitted - theory| = {_fmt(rec['measured'])}; claim: {_reference(rec)}"
    return f"law checked at n = c {e.landscape['law']} (no fit): {_fmt(rec['measured'])}; " \
        f"claim: {_reference(rec)}"


def _agrees(e: lmap.Entry) -> str:
    a = e.agrees()
    if a is None:
        return {"exponent": "bound holds" if e.record["passed"] else "bound FAILS",
                "deviation": "yes (deviation)", "scaling": "law holds"}[
            e.landscape["measures"]] if e.record["passed"] else "claim FAILS"
    if a:
        return "yes"
    if e.log_law:
        return ("not the bare exponent, as expected: the logarithm of the law raises its "
                "local slope by about 1/log d at these sizes")
    return "no (see the claim and its chapter)"


def _theory(e: lmap.Entry) -> str:
    exps = ", ".join(_fmt(v) for v in e.theory)
    return f"{e.landscape['law']} (exponent {exps}; {e.landscape['counts']})"


def summary_counts(found: list[lmap.Entry]) -> dict[str, int]:
    """How many entries measure an exponent, how many agree with the theory within their
    tolerance, how many are one-sided bounds, and how many check the law without a fit."""
    fitted = [e for e in found if e.landscape["measures"] == "exponent"]
    two_sided = [e for e in fitted if e.agrees() is not None]
    return {
        "entries": len(found),
        "measured": len(fitted),
        "two_sided": len(two_sided),
        "agree": sum(bool(e.agrees()) for e in two_sided),
        "bounds": len(fitted) - len(two_sided),
        "bounds_hold": sum(bool(e.record["passed"]) for e in fitted if e.agrees() is None),
        "checks": len(found) - len(fitted),
    }


def _alt_text(found: list[lmap.Entry], counts: dict[str, int]) -> str:
    classes = sorted({e.landscape["target_class"] for e in found},
                     key=lmap.TARGET_CLASSES.index)
    return (f"Chart of the exponent of n in d for the {counts['entries']} entries of the "
            f"map, one column per claim, grouped by target class ({', '.join(classes)}): "
            "a black dash at the theory's exponent, the measured exponent with its "
            f"tolerance; {counts['agree']} of the {counts['two_sided']} two-sided "
            "measurements lie within their tolerance of the theory's exponent; laws with a "
            "logarithm are drawn as squares, power laws as circles.")


def _write_figures(app, found) -> bool:
    try:
        import matplotlib.pyplot as plt

        from lecnotes.book import plotting
    except ImportError as err:  # pragma: no cover - matplotlib is a dependency of the book
        logger.warning("landscape: cannot draw the figure: %s", err)
        return False
    out = Path(app.outdir) / "_images"
    out.mkdir(parents=True, exist_ok=True)
    fig = exponent_figure(found)
    fig.savefig(out / FIGURE)
    plotting.phone_layout(fig)
    fig.savefig(out / PHONE)
    plt.close(fig)
    return True


def _figure_node(app, docname, found, counts) -> nodes.Node:
    base = posixpath.dirname(app.config.root_doc if app.builder.name == "singlehtml"
                             else docname)
    rel = posixpath.relpath("_images", base or ".")
    alt = html.escape(_alt_text(found, counts), quote=True)
    caption = (
        "Theory against measured exponent of n in d for every entry of the map: one column "
        "per claim, grouped by target class (one colour per class) and ordered by the "
        "theory's exponent. Black dash: the theory's exponent. Filled marker with bar: a "
        "fitted exponent with the claim's tolerance (a one-sided bound as an arrow from the "
        "bound). Open marker: a claim that checks the law without fitting an exponent, drawn "
        "at the theory's value. Circles: laws d^k; squares: laws d^k log d, whose local "
        "exponent at these sizes exceeds k by about 1/log d.")
    phone = "" if app.builder.name == "singlehtml" else (
        f'<source media="{BREAKPOINT}" srcset="{rel}/{PHONE}">')
    return nodes.raw("", (
        f'<figure class="lecnotes-landscape-figure" id="landscape-figure"><picture>{phone}'
        f'<img src="{rel}/{FIGURE}" alt="{alt}" style="max-width: 100%; height: auto;">'
        f"</picture><figcaption><p>{html.escape(caption)}</p></figcaption></figure>"),
        format="html")


def _claim_cell(app, docname, e: lmap.Entry) -> nodes.Node:
    cell = nodes.paragraph()
    cell += nodes.reference(
        "", "", nodes.literal(text=f"{e.chapter[:2]}:{e.label}"),
        refuri=app.builder.get_relative_uri(docname, f"lectures/{e.chapter}")
        + "#" + claims.anchor("claim", e.chapter, e.label), internal=True)
    cell += nodes.Text(" " + e.record["statement"])
    return cell


def _overview(found: list[lmap.Entry]) -> nodes.Node:
    """Target class x method: the law and the measured exponents, or 'not measured'."""
    methods = [m for m in lmap.METHODS if any(e.landscape["method"] == m for e in found)]
    rows = []
    for m in methods:
        row = [m]
        for cls in lmap.TARGET_CLASSES:
            mine = [e for e in found if e.landscape["method"] == m
                    and e.landscape["target_class"] == cls]
            if not mine:
                row.append("not measured")
                continue
            cell = nodes.container()
            for law in sorted({e.landscape["law"] for e in mine}, key=lambda w: (
                    min(x.theory[0] for x in mine if x.landscape["law"] == w), w)):
                vals = [_fmt(e.record["measured"]) for e in mine if e.landscape["law"] == law
                        and e.landscape["measures"] == "exponent"]
                cell += nodes.paragraph(text=f"{law}: " + (", ".join(vals) if vals
                                                           else "checked"))
            row.append(cell)
        rows.append(row)
    return _table(["Method", *lmap.TARGET_CLASSES], rows, [20, 16, 16, 16, 16, 16])


def _resolve(app, doctree, docname):
    placeholders = list(doctree.findall(landscape_placeholder))
    if not placeholders:
        return
    records, _ = _load(app)
    try:
        found = lmap.entries(records)
    except ValueError as err:
        logger.warning("landscape: a recorded landscape value is malformed: %s", err,
                       location=docname)
        found = []
    for where in lmap.unbacked(found):
        logger.warning("landscape: the entry %s is not backed by a passing claim", where,
                       location=docname)
    for problem in lmap.duplicates(found):
        logger.warning("landscape: %s", problem, location=docname)
    counts = summary_counts(found)
    out = [nodes.paragraph(text=(
        f"{counts['entries']} claims of {len({e.chapter for e in found})} chapters are on the "
        f"map. {counts['measured']} measure an exponent: {counts['two_sided']} against a "
        f"value, of which {counts['agree']} agree with the theory's asymptotic exponent "
        f"within their tolerance, and {counts['bounds']} as a one-sided bound "
        f"({counts['bounds_hold']} hold). {counts['checks']} check the theory's law without "
        "fitting an exponent (a quantity at n = c law(d) that does not move with d, or the "
        "largest deviation of several fitted exponents)."))]
    if found and _write_figures(app, found):
        out.append(_figure_node(app, docname, found, counts))
    if found:
        out.append(nodes.paragraph(text="Overview, target class x method (the law, then the "
                                   "measured exponents; 'not measured': the book does not "
                                   "measure this pair):"))
        out.append(_overview(found))
    for ph in list(doctree.findall(class_placeholder)):
        cls = ph["cls"]
        mine = [e for e in found if e.landscape["target_class"] == cls]
        if not mine:
            ph.replace_self(nodes.paragraph(text="No claim of the book measures an exponent "
                                            "for this class yet."))
            continue
        rows = []
        for m in lmap.METHODS:
            for e in (x for x in mine if x.landscape["method"] == m):
                rows.append([f"{m}; {e.landscape['target']}", _theory(e),
                             f"{_measured(e)}. Agrees: {_agrees(e)}",
                             _claim_cell(app, docname, e)])
        absent = [m for m in lmap.METHODS if not any(e.landscape["method"] == m for e in mine)]
        ph.replace_self([
            _table(["Method; target", "Theory", "Measured", "Claim (chapter: label) and sizes"],
                   rows, [18, 14, 22, 46]),
            nodes.paragraph(text="Not measured by the book for this class: "
                            + ", ".join(absent) + ".")])
    for ph in placeholders:
        ph.replace_self(out)


def _note_doc(app, doctree):
    if list(doctree.findall(landscape_placeholder)):
        app.env.domaindata.setdefault("landscape", {"docs": set()})["docs"].add(
            app.env.docname)


def _always_outdated(app, env, added, changed, removed):
    docs = env.domaindata.get("landscape", {}).get("docs", set())
    return [d for d in env.found_docs if d in docs]


def setup(app):
    app.add_node(landscape_placeholder)
    app.add_node(class_placeholder)
    app.add_directive("landscape", LandscapeDirective)
    app.connect("doctree-read", _note_doc)
    app.connect("env-get-outdated", _always_outdated)
    app.connect("doctree-resolved", _resolve)
    return {"parallel_read_safe": False, "parallel_write_safe": True, "version": "1.0"}
