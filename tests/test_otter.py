"""The otter-grader assignments (``make assignments``, ``tools/otter_assignments.py``).

The fast tests read the master notebooks the tool writes. The slow test builds the autograder
of every chapter with ``otter assign`` and grades, per chapter, with ``otter run`` (no Docker)
two submissions: the solution notebook (full score) and the student notebook with a typical
mistake (partial score; the feedback names the mistake and shows no part of the answer). It
runs in one process: otter is imported once, the eight assignments are built in one go, and
the sixteen gradings run two at a time.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ProcessPoolExecutor

import nbformat
import pytest
from _tools import load_tool

CHAPTERS = (0, 1, 2, 3, 4, 5, 6, 7)

otter_assignments = load_tool("otter_assignments")
LECTURES = otter_assignments.lectures()

# exercise label -> (a submission with a typical mistake, the words its feedback must contain)
MISTAKES = {
    "ex-ch11-denoiser": ('''
import numpy as np

def cluster_denoiser(A, B):
    k = A.shape[0]
    U = np.eye(k)                        # the one-hot vectors, not centred
    logits = B @ U.T - 0.5 * np.einsum("ci,ij,cj->c", U, A, U)
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ U
''', "not centred"),
    "ex-ch9-two-steps": ('''
def two_gd_steps(W0, X1, y1, X2, y2, c, dsigma):
    d = X1.shape[1]
    W1 = W0 + (c / d) * (y1[:, None] * dsigma(X1 @ W0.T)).T @ X1
    return W1 + (c / d) * (y2[:, None] * dsigma(X2 @ W0.T)).T @ X2   # W0, not W1
''', "pre-activations of W_0"),
    "ex-ch10-feature-overlap": ('''
import numpy as np

def feature_overlap(Z, y):               # forgets the - I: the mean of y enters the trace
    n, r = Z.shape
    A = (Z * y[:, None]).T @ Z / n
    return abs(np.trace(A)) / (np.sqrt(r) * np.linalg.norm(A))
''', "the identity is not subtracted"),
    "ex-ch0-noise-level": ('''
from lecnotes.core.hermite import gaussian_expectation
from lecnotes.core.targets import get_link

def noise_level(link, d):
    f = get_link(link)
    along = gaussian_expectation(lambda g: (f(g) * g) ** 2, breakpoints=(0.0,))
    energy = gaussian_expectation(lambda g: f(g) ** 2, breakpoints=(0.0,))
    return along / (d * energy)          # d coordinates, not d - 1
''', "divide by d-1"),
    "ex-ch1-ntk": ('''
import numpy as np

def relu_ntk_closed_form(X, Z):          # only the first-layer part
    G = X @ Z.T
    c = np.clip(G / np.outer(np.linalg.norm(X, axis=1), np.linalg.norm(Z, axis=1)), -1, 1)
    return 0.5 * G * (1 - np.arccos(c) / np.pi)
''', "add the second-layer part"),
    "ex-ch2-partner": ('''
def partner(a):
    return a                             # the trivial root
''', "trivial solution"),
    "ex-ch3-coding": ('''
import numpy as np

def optimal_q(tau):                      # the raw labels T(y) = y instead of T*
    return 2 / np.pi / (1 + tau**2)
''', "raw labels"),
    "ex-ch4-top-eigenvector": ('''
import numpy as np

def top_eigenvector(X, y, T):
    D = (X * T(y)[:, None]).T @ X / len(y)
    return np.linalg.eigh(D)[1][:, 0]    # eigh sorts in increasing order
''', "smallest eigenvalue"),
    "ex-ch5-partial-trace-matvec": ('''
import numpy as np

def partial_trace_matvec(X, t, v):       # the identity term is dropped
    n, d = X.shape
    s = np.einsum("ij,ij->i", X, X) - d
    return X.T @ (t * (s - 4) * (X @ v)) / n
''', "identity term"),
    "ex-ch6-giant-step": ('''
import numpy as np

def giant_step_update(W, a, X, y, eta):  # the residual f - y replaced by -y
    p = W.shape[0]
    Z = X @ W.T
    M = (Z > 0) * (-y / len(y))[:, None] * (a / np.sqrt(p))[None, :]
    return W - eta * (M.T @ X)
''', "correlation loss"),
    "ex-ch7-self-term": ('''
import numpy as np

def self_term(X, y, W0, a, eta, dsigma): # sigma'(z_ij) dropped
    sq = np.einsum("ij,ij->i", X, X)
    return eta * (y * sq / X.shape[0])[:, None] * a[None, :]
''', "factor sigma'(<w_j, x_i>) is missing"),
    "ex-ch8-sgd-step": ('''
import numpy as np
from lecnotes.online_sgd.experiments import dlink

def spherical_sgd_step(W, X, y, eta, k): # no projection on the tangent space
    Z = np.einsum("sbd,sd->sb", X, W)
    G = np.einsum("sb,sbd->sd", y * dlink(k, Z), X) / X.shape[1]
    out = W + eta * G
    return out / np.linalg.norm(out, axis=1, keepdims=True)
''', "not projected on the tangent space"),
}


def _labels(path):
    return sorted(otter_assignments.graded_stubs(nbformat.read(path, as_version=4)))


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_master_has_one_question_per_graded_exercise_and_tests_call_the_checks(path):
    nb, labels = otter_assignments.master_notebook(path)
    assert labels == _labels(path) and labels, "every chapter has a graded exercise"
    raw = [c.source for c in nb.cells if c.cell_type == "raw"]
    assert raw[0].startswith("# ASSIGNMENT CONFIG")
    questions = [re.search(r"name: (\S+)", s).group(1) for s in raw
                 if s.startswith("# BEGIN QUESTION")]
    assert questions == labels
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for label in labels:  # the tests call the chapter's check, nothing else
        assert f'runs(CHECKS["{label}"]' in code and f'CHECKS["{label}"](' in code
    assert "claims.start_chapter" not in code


def test_every_graded_exercise_has_a_typical_mistake():
    labels = {label for path in LECTURES for label in _labels(path)}
    missing = labels - set(MISTAKES)
    assert not missing, f"add a typical mistake for {sorted(missing)} to MISTAKES"


def _answer_cell(nb):
    cells = [c for c in nb.cells if "otter_answer_cell" in c.metadata.get("tags", [])]
    assert len(cells) == 1, "one graded exercise per chapter (extend the test for more)"
    return cells[0]


def _solution_lines(path, label):
    """The lines of the function body of the lecture's solution (what must never leak)."""
    text = "\n\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                       if c.cell_type == "markdown")
    code = otter_assignments.solution_code(text, label)
    lines = [ln.strip() for ln in code.split("\n")[1:]]
    return [ln for ln in lines if len(ln) > 12 and not ln.startswith(("import", "from", "def",
                                                                      "#", '"""'))]


def _grade(args):
    """otter run on one submission: (score, possible, feedback, seconds)."""
    submission, ag_zip = args
    from otter.api import grade_submission  # only .venv-dev has otter-grader

    start = time.perf_counter()
    for attempt in range(3):
        try:
            res = grade_submission(str(submission), str(ag_zip), quiet=True)
            break
        except RuntimeError as err:  # jupyter_client picks a free port that another kernel
            # may bind first (zmq "Address already in use", then "Kernel died before replying
            # to kernel_info"): a race of kernel start-up, not a grade; start the kernel again
            if "Kernel died" not in str(err) or attempt == 2:
                raise
    feedback = "\n".join(test.summary() for test in res.results.values())
    return res.total, res.possible, feedback, time.perf_counter() - start


@pytest.mark.slow  # builds eight autograders and grades sixteen notebooks: make test-slow
def test_autograder_grades_a_right_and_a_wrong_submission_of_every_chapter(tmp_path, capsys):
    pytest.importorskip("otter")
    start = time.perf_counter()
    out = tmp_path / "otter"
    index = otter_assignments.editions.book_index()
    jobs, expect = [], []
    for path in LECTURES:
        folder = otter_assignments.build(path, out, index=index)
        ag_zip = otter_assignments.autograder_zip(folder)
        student = nbformat.read(folder / "dist" / "student" / f"{path.stem}.ipynb",
                                as_version=4)
        (label,) = _labels(path)
        leaks = _solution_lines(path, label)
        text = "\n".join(c.source for c in student.cells)
        assert not [ln for ln in leaks if ln in text], "the student notebook holds a solution"
        code, phrase = MISTAKES[label]
        _answer_cell(student).source = code.strip()
        wrong = tmp_path / "submissions" / "wrong" / f"{path.stem}.ipynb"
        wrong.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(student, wrong)
        right = folder / "dist" / "autograder" / f"{path.stem}.ipynb"
        jobs += [(right, ag_zip), (wrong, ag_zip)]
        expect += [(path.stem, "right", None, leaks), (path.stem, "wrong", phrase, leaks)]
    built = time.perf_counter() - start
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_grade, jobs))
    lines = []
    for (stem, kind, phrase, leaks), (total, possible, feedback, secs) in zip(expect, results,
                                                                          strict=True):
        excerpt = " | ".join(ln.strip() for ln in feedback.split("\n")
                             if ln.strip().startswith("- ") or "not yet" in ln)[:300]
        lines.append(f"{stem} {kind}: {total:g}/{possible:g} ({secs:.0f} s) {excerpt}")
        assert possible == sum(otter_assignments.POINTS)
        if kind == "right":
            assert total == possible, f"{stem}: the solution scores {total}/{possible}\n{feedback}"
        else:
            assert 0 < total < possible, f"{stem}: the mistake scores {total}/{possible}"
            assert phrase in feedback, f"{stem}: the mistake is not named:\n{feedback}"
            assert not [ln for ln in leaks if ln in feedback], f"{stem}: the feedback leaks"
    with capsys.disabled():
        print(f"\notter: built {len(LECTURES)} autograders in {built:.0f} s, graded "
              f"{len(jobs)} submissions in {time.perf_counter() - start - built:.0f} s")
        print("\n".join(lines))
