"""The documentation stays inside the repository and its links resolve.

Every link of README.md and docs/*.md (inline links, images, reference definitions, autolinks and
HTML href/src) must name a file or folder of this repository, relative to the page; a link into a
markdown page with an anchor must name a heading of that page (GitHub's heading ids). Nothing may
point outside the repository: no URL, no absolute path, no ../ past the repository's root.

The README keeps the project's rule of two set-up commands: its one ```sh block (the convention
that marks set-up commands; other examples use other fences) sits under "Set up and run" and holds
exactly the main job and the test command, and .ci/run runs the test command and nothing else.
"""

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README] + sorted((ROOT / "docs").glob("*.md"))

MAIN_COMMAND = "bash scripts/quickstart.sh"
TEST_COMMAND = "bash scripts/test.sh"

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
AUTOLINK = re.compile(r"<((?:[a-zA-Z][a-zA-Z0-9+.-]*:|/)[^>\s]*)>")
HTML_ATTR = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']""")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def blocks(text):
    """(kind, info, lines) in order: kind "text" (outside fences) or "code" (a fenced block with
    its info string)."""
    out, current, fence = [], [], None
    info = ""
    for line in text.splitlines():
        match = FENCE.match(line)
        if fence is None and match:
            out.append(("text", "", current))
            current, fence, info = [], match.group(1), match.group(2).strip()
        elif fence is not None and match and match.group(1)[0] == fence[0] \
                and len(match.group(1)) >= len(fence) and not match.group(2).strip():
            out.append(("code", info, current))
            current, fence = [], None
        else:
            current.append(line)
    out.append(("code" if fence is not None else "text", info, current))
    return out


def links(page):
    """(line text, target) of every link outside code blocks and code spans."""
    found = []
    for kind, _, lines in blocks(page.read_text(encoding="utf-8")):
        if kind != "text":
            continue
        for line in lines:
            if (match := REFERENCE.match(line)):
                found.append((line, match.group(1).strip("<>")))
                continue
            bare = CODE_SPAN.sub("", line)
            for pattern in (INLINE_LINK, AUTOLINK, HTML_ATTR):
                for match in pattern.finditer(bare):
                    found.append((line, match.group(1).strip("<>")))
    return found


def slug(heading):
    """GitHub's id of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.strip().lower()
    kept = []
    for c in text:
        if c in " -_" or unicodedata.category(c)[0] in "LNM":
            kept.append("-" if c == " " else c)
    return "".join(kept)


def anchors(page):
    ids, seen = set(), {}
    for kind, _, lines in blocks(page.read_text(encoding="utf-8")):
        if kind != "text":
            continue
        for line in lines:
            match = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not match:
                continue
            base = slug(match.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            ids.add(base if n == 0 else f"{base}-{n}")
    return ids


def test_there_are_pages():
    assert README.is_file()
    assert len(PAGES) > 1, "docs/ holds no pages"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_stay_inside_and_resolve(page):
    problems = []
    for line, target in links(page):
        where = f"{page.relative_to(ROOT)}: {target!r}"
        if SCHEME.match(target) or target.startswith("//"):
            problems.append(f"{where}: leaves the repository (a URL)")
            continue
        path_part, _, anchor = target.partition("#")
        if path_part.startswith("/"):
            problems.append(f"{where}: an absolute path; link relative to the page")
            continue
        resolved = (page.parent / path_part).resolve() if path_part else page
        try:
            resolved.relative_to(ROOT)
        except ValueError:
            problems.append(f"{where}: leaves the repository")
            continue
        if not resolved.exists():
            problems.append(f"{where}: {resolved.relative_to(ROOT)} does not exist")
            continue
        if anchor and resolved.suffix == ".md" and resolved.is_file():
            if anchor not in anchors(resolved):
                problems.append(f"{where}: no heading #{anchor} in {resolved.relative_to(ROOT)}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_paths_of_this_machine(page):
    text = page.read_text(encoding="utf-8")
    for outside in ("../shared", str(ROOT.parent) + "/", str(ROOT)):
        assert outside not in text, f"{page.relative_to(ROOT)} names {outside!r}, outside the repository"


def command_lines(lines):
    """The commands of a shell block: comments and blank lines dropped, trailing comments cut."""
    out = []
    for line in lines:
        command = re.sub(r"\s+#.*$", "", line).strip()
        if command and not command.startswith("#"):
            out.append(command)
    return out


def test_readme_has_exactly_the_two_set_up_commands():
    text = README.read_text(encoding="utf-8")
    sh_blocks = [lines for kind, info, lines in blocks(text)
                 if kind == "code" and info.split()[:1] in (["sh"], ["bash"], ["shell"])]
    assert len(sh_blocks) == 1, (
        f"README.md: expected exactly one shell (```sh) block, the set-up commands; found "
        f"{len(sh_blocks)} (write other examples in ```python, ```cpp or a plain ``` block)")
    assert command_lines(sh_blocks[0]) == [MAIN_COMMAND, TEST_COMMAND]
    setup = text.index("## Set up and run")
    block = text.index("```sh")
    following = text.find("\n## ", setup + 1)
    assert setup < block < (following if following != -1 else len(text)), (
        "README.md: the ```sh block belongs under '## Set up and run'")
    for command in (MAIN_COMMAND, TEST_COMMAND):
        assert (ROOT / command.split()[-1]).is_file()


def test_ci_runs_the_readme_test_command_and_nothing_else():
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [c for c in command_lines(lines)
                if not c.startswith("set ") and not c.startswith("cd ")]
    assert commands == [TEST_COMMAND], f".ci/run runs {commands}, expected [{TEST_COMMAND!r}]"
