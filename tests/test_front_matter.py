"""The front matter keeps up with the table of contents (fast: reads files only)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _toc_lectures() -> list[str]:
    return re.findall(r"^\s*- file: lectures/(\S+)\s*$", (ROOT / "_toc.yml").read_text(), re.M)


def _plan_chapters(text: str) -> set[int]:
    """Chapter numbers in the 'Chapters' column of the course plan of book/instructors.md."""
    plan = text.split("## Planning", 1)[1].split("\n## ", 1)[0]
    found = set()
    for line in plan.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not re.fullmatch(r"\d[\d,\s\-]*", cells[1]):
            continue
        for part in cells[1].split(","):
            lo, _, hi = part.strip().partition("-")
            found.update(range(int(lo), int(hi or lo) + 1))
    return found


def test_every_lecture_of_the_toc_is_in_the_course_plan():
    plan = _plan_chapters((ROOT / "book" / "instructors.md").read_text())
    missing = [stem for stem in _toc_lectures() if int(stem[:2]) not in plan]
    assert not missing, f"book/instructors.md: the course plan misses {missing}"


def test_the_course_plan_reader_can_fail():
    text = "## Planning\n\n| Part | Chapters | L |\n|---|---|---|\n| a | 0, 2-3 | 1 |\n\n## Next"
    assert _plan_chapters(text) == {0, 2, 3}


def test_every_explorer_is_named_on_how_to_use():
    """A chapter whose notebook has an *Explore* section is linked in the explorers list."""
    text = (ROOT / "book" / "how-to-use.md").read_text()
    listed = text.split("**Explorers.**", 1)[1].split("\n\n", 1)[0]
    missing = [stem for stem in _toc_lectures()
               if "### Explore" in (ROOT / "lectures" / f"{stem}.ipynb").read_text()
               and f"lectures/{stem}.ipynb" not in listed]
    assert not missing, f"book/how-to-use.md: the explorers list misses {missing}"
