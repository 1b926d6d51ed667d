"""How the claims of a cell look in the page: one compact block with a table, linked to the
claims ledger (used by :mod:`lecnotes.book.claims`, which re-exports both functions)."""

from __future__ import annotations

import html

from lecnotes.book.sharpness import format_number

__all__ = ["anchor", "block_html"]


def anchor(prefix: str, chapter: str, label: str) -> str:
    """The HTML id of a claim in its chapter (``claim-...``) or in the ledger (``ledger-...``).

    Parameters
    ----------
    prefix : {"claim", "ledger"}
    chapter, label : str
        The claim's chapter (notebook stem) and label.

    Returns
    -------
    str
    """
    return f"{prefix}-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in
                                  f"{chapter}-{label}")


def block_html(records: list, ledger: str = "../book/claims-ledger.html") -> str:
    """The claims of one cell as one compact block (a ``<details>`` element).

    The summary line says how many checks hold and names them; the table inside gives each
    claim's statement, measured value, reference and alternative, with an anchor the claims
    ledger links to and a link back to the ledger's row. Collapsed when there are more than
    two claims. Styled by the classes ``lecnotes-claims*`` (``book/_static/lecnotes.css``), so
    that it reads in the light and the dark theme.

    Parameters
    ----------
    records : list of lecnotes.book.claims.Claim
        The claims, in the order they were made.
    ledger : str
        URL of the claims ledger page relative to the chapter's page.

    Returns
    -------
    str
    """
    failed = [r for r in records if not r.passed]
    n = len(records)
    names = ", ".join(f"<code>{html.escape(r.label)}</code>" for r in records)
    if failed:
        head = (f'<span class="lecnotes-claims-mark">&#10008;</span> {len(failed)} of {n} '
                f"check{'s' * (n != 1)} FAIL{'S' * (len(failed) == 1)}: {names}")
    else:
        verb = "holds" if n == 1 else "hold"
        head = (f'<span class="lecnotes-claims-mark">&#10004;</span> {n} '
                f"check{'s' * (n != 1)} {verb}: {names}")
    rows = []
    for r in records:
        alt = format_number(r.alternative) if r.alternative is not None else (
            "none: " + r.no_alternative if r.no_alternative else "-")
        if r.powerless:
            alt += " (passes too: no power)"
        link = f"{ledger}#{anchor('ledger', r.chapter, r.label)}"
        rows.append(
            f'<tr id="{anchor("claim", r.chapter, r.label)}" class="lecnotes-claim-'
            f'{"pass" if r.passed else "fail"}"><td><a href="{html.escape(link)}" title="this '
            f'claim in the claims ledger"><code>{html.escape(r.label)}</code></a> '
            f"{html.escape(r.statement)}</td><td>{html.escape(format_number(r.measured))}</td>"
            f"<td>{html.escape(r.reference_text().split('; alternative')[0])}</td>"
            f"<td>{html.escape(alt)}</td></tr>")
    status = "fail" if failed else "pass"
    opened = " open" if n <= 2 or failed else ""
    return (f'<details class="lecnotes-claims lecnotes-claims-{status}"{opened}>'
            f"<summary>{head}</summary>"
            '<table class="lecnotes-claims-table"><thead><tr><th>claim</th><th>measured</th>'
            "<th>expected</th><th>alternative</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></details>")
