#!/usr/bin/env python3
"""Fails when EXPERIMENTS.md reads as a work log instead of a results book: a local path a
reader cannot have (/work/..., a home folder, a /tmp/ file the text does not create), a git
branch named as where code lives ("this branch", "branch `amg`"), or a work session named
("session 16", "in this session"). Results are written in the present tense about the code;
history belongs to git.

A /tmp/ path is fine in a command that creates it (`--out /tmp/x`, `-o /tmp/x`,
`> /tmp/x`, `mkdir -p /tmp/x`, `--target-dir /tmp/x`, `CARGO_TARGET_DIR=/tmp/x`).

Usage: python3 .ci/check_experiments.py [FILE]   (default EXPERIMENTS.md at the repository
root; prints each finding as FILE:LINE: why: text, exits 1 if any)
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


def main():
    path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "EXPERIMENTS.md"
    found = list(findings(path.read_text(encoding="utf-8")))
    for n, why, line in found:
        print(f"{path.name}:{n}: {why}: {line.strip()[:160]}")
    print(f"{path.name}: {len(found)} finding(s)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
