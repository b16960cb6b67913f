#!/usr/bin/env python3
"""Fails when EXPERIMENTS.md reads as a work log instead of a results book: a local path a
reader cannot have (/work/..., a home folder, a /tmp/ file the text does not create), a git
branch named as where code lives ("this branch", "branch `amg`"), or a work session named
("session 16", "in this session"), or a binary or run named by its commit (`4bca53a`,
"commit 5d754a0"). Results are written in the present tense about the code; history belongs to
git. EXPERIMENTS.md is a short results book: it fails past MAX_LINES lines, and its detailed
tables live in the guide's pages under docs/experiments/, which get the same checks (all but
the length).

A /tmp/ path is fine in a command that creates it (`--out /tmp/x`, `-o /tmp/x`,
`> /tmp/x`, `mkdir -p /tmp/x`, `--target-dir /tmp/x`, `CARGO_TARGET_DIR=/tmp/x`).

Usage: python3 .ci/check_experiments.py [FILE...]   (default EXPERIMENTS.md at the repository
root and docs/experiments/*.md; prints each finding as FILE:LINE: why: text, exits 1 if any)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LOCAL = re.compile(r"(?<![\w.])(/work/|/home/|/root/|/Users/|[A-Z]:\\\\)")
TMP = re.compile(r"(?<![\w.])/tmp/")
CREATES_TMP = re.compile(
    r"(--out|-o|--target-dir|>|>>|mkdir(\s+-p)?)\s+/tmp/|CARGO_TARGET_DIR=/tmp/"
)
BRANCH = re.compile(r"\bbranch(es)?\b", re.I)
# Branches of code, not of git: a conditional jump in a loop is a result worth stating.
CODE_BRANCH = re.compile(
    r"((data-dependent|a|the) )?branch (per|on|that used)|branch-free|branchless", re.I
)
SESSION = re.compile(r"\bsessions?\b", re.I)
# A git commit's abbreviated hash: 7 to 40 hex digits with at least one digit and one letter,
# not part of a number (`3.759399e4`) or a word.
COMMIT = re.compile(r"(?<![\w.])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w.])")
# The book stays a book: new sections go at its end, details to docs/experiments/.
MAX_LINES = 1500


def findings(text):
    for n, line in enumerate(text.splitlines(), 1):
        if LOCAL.search(line):
            yield n, "a local path", line
        if TMP.search(line) and len(TMP.findall(line)) > len(CREATES_TMP.findall(line)):
            yield n, "a /tmp/ path the text does not create", line
        if BRANCH.search(CODE_BRANCH.sub("", line)):
            yield n, "a git branch named", line
        if SESSION.search(line):
            yield n, "a work session named", line
        if COMMIT.search(line):
            yield n, "a commit named (a binary or run belongs to git, not to the book)", line


def too_long(path, text):
    """EXPERIMENTS.md past MAX_LINES lines: detailed tables belong in docs/experiments/."""
    lines = len(text.splitlines())
    if path.name == "EXPERIMENTS.md" and lines > MAX_LINES:
        yield lines, f"{lines} lines, more than {MAX_LINES}: move detailed tables to a page of docs/experiments/", ""


def main():
    if len(sys.argv) > 1:
        paths = [pathlib.Path(a) for a in sys.argv[1:]]
    else:
        paths = [ROOT / "EXPERIMENTS.md"] + sorted((ROOT / "docs" / "experiments").glob("*.md"))
    total = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        found = list(findings(text)) + list(too_long(path, text))
        for n, why, line in found:
            print(f"{path.name}:{n}: {why}: {line.strip()[:160]}")
        total += len(found)
    print(f"{len(paths)} file(s), {total} finding(s)", file=sys.stderr)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
