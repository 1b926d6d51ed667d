"""Format the lectures' code to at most 88 columns, so that no line runs off its block.

A code block of the HTML book shows about 90 characters at a desktop width; a longer line is
cut off at the right edge. This tool

1. runs ``ruff format --line-length 88`` on the notebooks (ruff formats ``.ipynb`` cells);
2. splits what ruff cannot: a string literal alone on its line (an argument, an element) is
   cut at spaces into implicitly concatenated pieces, and a comment into several comment lines;
3. runs ruff again, so that the result is what ``ruff format --check`` accepts.

Every cell's code is parsed before and after, and the two syntax trees must be identical
(implicit concatenation parses to the same constant), so the tool cannot change what a cell
computes; a cell whose tree would change is left as ruff made it and reported.

Usage::

    python tools/format_notebooks.py            # format every lecture in place
    python tools/format_notebooks.py --check    # exit 1 if a lecture is not formatted, or if
                                                # a code line is longer than 88 columns

It runs the ``ruff`` of ``.venv-dev`` (``requirements-dev.txt`` pins it), or the one on PATH.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LECTURES = ROOT / "lectures"
WIDTH = 88
_STRING_LINE = re.compile(
    r"^(?P<indent>\s*)(?P<key>\w+=)?(?P<prefix>[rRbBfFuU]{0,2})(?P<quote>\"|')(?P<body>.*)(?P=quote)"
    r"(?P<tail>[,)\]]*)$")


def ruff() -> str:
    """The path of the pinned ruff (``.venv-dev``), or the one on PATH."""
    pinned = ROOT / ".venv-dev" / "bin" / "ruff"
    found = str(pinned) if pinned.exists() else shutil.which("ruff")
    if not found:
        raise SystemExit("ruff not found: run `make install-dev`")
    return found


def run_ruff(paths: list[Path]) -> None:
    """``ruff format`` at the book's notebook width, in place."""
    subprocess.run([ruff(), "format", "--quiet", "--line-length", str(WIDTH),
                    "--config", "extend-exclude = []", *map(str, paths)], check=True)


def _split_text(body: str, room: int, fstring: bool) -> list[str]:
    """Cut ``body`` (a string literal's text) after spaces into pieces of at most ``room``.

    A cut never falls inside an escape sequence or an f-string placeholder; a piece with no
    space to cut at stays whole (and longer than ``room``).
    """
    pieces, start, last_space, depth, i = [], 0, None, 0, 0
    while i < len(body):
        ch = body[i]
        step = 2 if (ch == "\\" or (fstring and body.startswith(("{{", "}}"), i))) else 1
        if i - start + step > room and last_space is not None:
            pieces.append(body[start:last_space + 1])
            start, last_space = last_space + 1, None
            continue
        if fstring and step == 1 and ch == "{":
            depth += 1
        elif fstring and step == 1 and ch == "}":
            depth -= 1
        elif ch == " " and depth == 0:
            last_space = i
        i += step
    pieces.append(body[start:])
    return [p for p in pieces if p]


def _inline_comment(line: str) -> int | None:
    """The column where a comment after code starts on ``line``, or ``None``."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    kinds = [t.type for t in tokens]
    if tokenize.COMMENT not in kinds:
        return None
    at = kinds.index(tokenize.COMMENT)
    code = [t for t in tokens[:at] if t.type not in (tokenize.INDENT, tokenize.DEDENT,
                                                     tokenize.NL, tokenize.NEWLINE)]
    return tokens[at].start[1] if code else None


def _merge_string_runs(lines: list[str]) -> list[str]:
    """Join each run of string-literal lines (an implicit concatenation) that has a line
    longer than the width into one line, so that the split reflows the whole sentence."""
    out, i = [], 0
    while i < len(lines):
        m = _STRING_LINE.match(lines[i])
        j = i + 1
        if m and not m["tail"]:
            while j < len(lines):
                n = _STRING_LINE.match(lines[j])
                if not n or n["key"] or n["indent"] != m["indent"] or n["quote"] != m["quote"]:
                    break
                j += 1
                if n["tail"]:
                    break
        run = lines[i:j]
        if len(run) < 2 or max(map(len, run)) <= WIDTH:
            out.append(lines[i])
            i += 1
            continue
        parts = [_STRING_LINE.match(line) for line in run]
        fstring = any("f" in p["prefix"].lower() for p in parts)
        raw = {"r" in p["prefix"].lower() for p in parts}
        if len(raw) > 1 or any(p["quote"] in p["body"] for p in parts):
            out.append(lines[i])
            i += 1
            continue
        body = "".join(p["body"] if ("f" in p["prefix"].lower() or not fstring)
                       else p["body"].replace("{", "{{").replace("}", "}}") for p in parts)
        prefix = ("r" if raw == {True} else "") + ("f" if fstring else "")
        first = parts[0]
        out.append(f'{first["indent"]}{first["key"] or ""}{prefix}{first["quote"]}{body}'
                   f'{first["quote"]}{parts[-1]["tail"]}')
        i = j
    return out


def split_long_lines(code: str) -> str:
    """Split long string-literal lines and comment lines of ``code``; other lines unchanged."""
    out = []
    for line in _merge_string_runs(code.split("\n")):
        if len(line) <= WIDTH:
            out.append(line)
            continue
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith("#"):
            words, current = stripped.lstrip("#").split(), indent + "#"
            for word in words:
                if len(current) + 1 + len(word) > WIDTH and current.strip() != "#":
                    out.append(current)
                    current = indent + "#"
                current += " " + word
            out.append(current)
            continue
        comment = _inline_comment(line)
        if comment is not None:   # code, then a comment: the comment goes on lines above
            code_part = line[:comment].rstrip()
            out.extend(split_long_lines(indent + line[comment:]).split("\n"))
            out.append(code_part)
            continue
        m = _STRING_LINE.match(line)
        if m and m["quote"] not in m["body"]:
            key = m["key"] or ""
            room = WIDTH - len(indent) - len(key) - len(m["prefix"]) - 2 - len(m["tail"])
            pieces = _split_text(m["body"], room, "f" in m["prefix"].lower())
            q, fstring = m["quote"], "f" in m["prefix"].lower()
            for k, piece in enumerate(pieces):
                tail = m["tail"] if k == len(pieces) - 1 else ""
                prefix = m["prefix"]
                if fstring and "{" not in piece and "}" not in piece:
                    prefix = prefix.replace("f", "").replace("F", "")   # no placeholder here
                lead = key if k == 0 else " " * len(key)
                out.append(f"{indent}{lead}{prefix}{q}{piece}{q}{tail}")
            continue
        out.append(line)
    return "\n".join(out)


def _same_tree(a: str, b: str) -> bool:
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except SyntaxError:
        return False


def split_notebook(path: Path) -> list[str]:
    """Split the long lines of every code cell of ``path`` in place; return cells left alone."""
    nb = json.loads(path.read_text())
    refused = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        new = split_long_lines(src)
        if new == src:
            continue
        if _same_tree(src, new):
            cell["source"] = new.splitlines(keepends=True)
        else:
            refused.append(f"{path.name}:{cell.get('id')}")
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return refused


def long_lines(path: Path) -> list[str]:
    """The code lines of ``path`` longer than the width, as ``name:id: line``."""
    nb = json.loads(path.read_text())
    return [f"{path.name}:{c.get('id')}: {line[:60]}..."
            for c in nb["cells"] if c["cell_type"] == "code"
            for line in "".join(c["source"]).splitlines() if len(line) > WIDTH]


def format_all(paths: list[Path]) -> list[str]:
    """Format ``paths`` in place (ruff, split, ruff); return the cells the split left alone."""
    run_ruff(paths)
    refused = [r for p in paths for r in split_notebook(p)]
    run_ruff(paths)
    return refused


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="change nothing; exit 1 if a lecture would change or has long lines")
    args = ap.parse_args(argv)
    paths = sorted(LECTURES.glob("[0-9][0-9]_*.ipynb"))
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            copies = [Path(tmp) / p.name for p in paths]
            for p, c in zip(paths, copies, strict=True):
                shutil.copy(p, c)
            format_all(copies)
            stale = [p.name for p, c in zip(paths, copies, strict=True)
                     if json.loads(p.read_text()) != json.loads(c.read_text())]
        too_long = [line for p in paths for line in long_lines(p)]
        for name in stale:
            print(f"not formatted: lectures/{name} (run python tools/format_notebooks.py)")
        for line in too_long:
            print(f"longer than {WIDTH} columns: {line}")
        return 1 if stale or too_long else 0
    refused = format_all(paths)
    left = [line for p in paths for line in long_lines(p)]
    for r in refused:
        print(f"left as ruff made it (the split would change the code): {r}")
    for line in left:
        print(f"still longer than {WIDTH} columns, split it by hand: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
