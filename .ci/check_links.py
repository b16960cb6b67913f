#!/usr/bin/env python3
"""Fails on a broken relative link in the guide (docs/) or the repository's top-level
Markdown files: a link or image whose file does not exist, an `#anchor` that no heading of
the target page makes (mdBook's heading ids), an `{{#include}}` of a missing file, a code
fence that does not close where it seems to, or a page of docs/ that SUMMARY.md does not list. mdBook itself does not check links; the
`mdbook-linkcheck` crate would, but it also fetches web links, which CI must not depend on.

Usage: python3 .ci/check_links.py   (from anywhere; prints each problem, exits 1 if any)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INCLUDE = re.compile(r"\{\{#include\s+([^}\s]+)\s*\}\}")
FENCE = re.compile(r"^\s*```")
CLOSE = re.compile(r"^\s*```\s*$")


def unfenced(text):
    """The lines outside fenced code blocks. As in CommonMark, only a bare fence closes a block
    (a closing line with text after the backticks leaves the rest of the page as code)."""
    out, in_fence = [], False
    for line in text.splitlines():
        if (CLOSE if in_fence else FENCE).match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            out.append(line)
    return out


def fence_problems(text):
    """Fence lines that do not do what they look like: a ``` line with text after it inside a
    block (it does not close the block: the page renders as code up to the next bare ```),
    and a block still open at the end of the page."""
    found, in_fence = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if in_fence and FENCE.match(line) and not CLOSE.match(line):
            found.append(f"line {n}: a ``` line with text inside a code block does not close it")
        if (CLOSE if in_fence else FENCE).match(line):
            in_fence = not in_fence
    if in_fence:
        found.append("a code block is never closed (a bare ``` closes one)")
    return found


def prose(text):
    """The text outside fenced code blocks and inline code (links there are not links)."""
    return "\n".join(re.sub(r"`[^`]*`", "", line) for line in unfenced(text))


def slug(heading):
    """mdBook's id for a heading: lower case, alphanumerics, `-` and `_` kept, spaces to `-`."""
    heading = re.sub(r"`([^`]*)`", r"\1", heading)
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return "".join(c if (c.isalnum() or c in "-_") else "-" if c.isspace() else "" for c in heading)


def anchors(page):
    ids = set()
    # Headings keep their inline code: mdBook's id includes it (`auto` in "The multigrid, and
    # `auto`" gives "the-multigrid-and-auto").
    for line in unfenced(page.read_text(encoding="utf-8")):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            ident, n = base, 1
            while ident in ids:
                ident, n = f"{base}-{n}", n + 1
            ids.add(ident)
    return ids


def main():
    pages = sorted((ROOT / "docs").rglob("*.md")) + sorted(ROOT.glob("*.md"))
    pages += sorted((ROOT / "scenes").rglob("*.md")) + sorted((ROOT / "crates").glob("*/README.md"))
    problems = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        where = page.relative_to(ROOT)
        problems += [f"{where}: {p}" for p in fence_problems(text)]
        for target in INCLUDE.findall(text):
            if not (page.parent / target).is_file():
                problems.append(f"{where}: {{{{#include {target}}}}}: no such file")
        for target in LINK.findall(prose(text)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                problems.append(f"{where}: link to {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{where}: link to {target}: no heading makes #{anchor}")
    summary = (ROOT / "docs" / "SUMMARY.md").read_text(encoding="utf-8")
    listed = {(ROOT / "docs" / t).resolve() for t in LINK.findall(summary)}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        if page.name != "SUMMARY.md" and page.resolve() not in listed:
            problems.append(f"{page.relative_to(ROOT)}: not listed in docs/SUMMARY.md")
    for p in problems:
        print(p)
    print(f"{len(pages)} pages checked, {len(problems)} broken link(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
