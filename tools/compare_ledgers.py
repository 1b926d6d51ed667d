"""Compare two claims ledgers claim by claim (the check of a refactor that must not change them).

Usage (from the repository root)::

    .venv/bin/python tools/compare_ledgers.py BEFORE AFTER [--rtol 1e-9]

``BEFORE`` and ``AFTER`` are folders of ``<chapter>.json`` claim records, the format written
by :mod:`lecnotes.book.claims` (``{"chapter", "provenance", "claims": [...]}``), for instance a
copy of ``_build/claims`` taken before a change and ``_build/claims`` after
``tools/run_nbval.py --cache``. Claims are matched by (chapter, label). For every claim
present in both, the ``measured`` and ``expected`` values are compared to ``rtol`` relative
(numbers: ``|a - b| <= rtol * max(|a|, |b|)``, so two zeros agree; lists and tuples entry by
entry; anything else by equality); a change of ``tol``, ``relation``, ``alternative`` or
``passed`` is reported too. Chapters, claims and labels that appear on one side only are
listed as removed or added. The provenance (time, digest) is expected to differ and is
ignored.

Exit status 0 when both ledgers hold the same claims with the same values, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

VALUE_FIELDS = ("measured", "expected")
OTHER_FIELDS = ("tol", "relation", "alternative", "passed")


def load(folder: Path) -> dict[tuple[str, str], dict]:
    """All claims of a folder, keyed by (chapter, label); duplicated labels keep a suffix."""
    out: dict[tuple[str, str], dict] = {}
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text())
        chapter = record.get("chapter", path.stem)
        for claim in record.get("claims", []):
            key = (chapter, claim["label"])
            n = 1
            while key in out:  # a label recorded twice (re-executed cell): keep both
                n += 1
                key = (chapter, f"{claim['label']}#{n}")
            out[key] = claim
    return out


def same(a, b, rtol: float) -> bool:
    """Equality of two recorded values, numbers to ``rtol`` relative."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= rtol * max(abs(a), abs(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y, rtol) for x, y in zip(a, b, strict=True))
    return a == b


def relative(a, b) -> str:
    try:
        scale = max(abs(a), abs(b))
        return f"{abs(a - b) / scale:.2e}" if scale else "0"
    except TypeError:
        return "n/a"


def compare(before: dict, after: dict, rtol: float) -> tuple[list[str], int]:
    """Lines describing every difference, and the number of claims compared."""
    lines = []
    for key in sorted(set(before) - set(after)):
        lines.append(f"REMOVED  {key[0]} / {key[1]}")
    for key in sorted(set(after) - set(before)):
        lines.append(f"ADDED    {key[0]} / {key[1]}")
    common = sorted(set(before) & set(after))
    for key in common:
        b, a = before[key], after[key]
        for name in VALUE_FIELDS:
            if not same(b.get(name), a.get(name), rtol):
                lines.append(f"CHANGED  {key[0]} / {key[1]}: {name} {b.get(name)!r} -> "
                             f"{a.get(name)!r} (relative {relative(b.get(name), a.get(name))})")
        for name in OTHER_FIELDS:
            if not same(b.get(name), a.get(name), rtol):
                lines.append(f"CHANGED  {key[0]} / {key[1]}: {name} {b.get(name)!r} -> "
                             f"{a.get(name)!r}")
    return lines, len(common)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path, help="folder of claim records (reference)")
    ap.add_argument("after", type=Path, help="folder of claim records (to check)")
    ap.add_argument("--rtol", type=float, default=1e-9, help="relative tolerance on values")
    args = ap.parse_args(argv)
    for folder in (args.before, args.after):
        if not folder.is_dir():
            ap.error(f"{folder} is not a folder")
    before, after = load(args.before), load(args.after)
    lines, n = compare(before, after, args.rtol)
    chapters = sorted({k[0] for k in before} | {k[0] for k in after})
    print(f"{n} claims compared in {len(chapters)} chapters ({len(before)} before, "
          f"{len(after)} after), rtol {args.rtol:g}")
    for line in lines:
        print(line)
    print("identical" if not lines else f"{len(lines)} difference(s)")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
