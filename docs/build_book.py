"""Build the course as a static HTML book from the stored notebooks (`make book`): nothing is re-executed.

    python docs/build_book.py            # -> _build/book/html/index.html
    python docs/build_book.py --check    # then check that every notebook and docs page has its page

The book is Sphinx with MyST-NB (the notebook reader of the Executable Books project, which Jupyter Book 1 was
built on) and the Sphinx Book Theme: all of it installs from PyPI (`docs/book-requirements.txt`), needs no
Node.js, and builds offline. (Jupyter Book 2 renders through the MyST engine, a Node.js program that fetches its
site theme from the internet on the first build: this course's machines reach only the package registries.)

The landing page is README's course map; then one part per chapter, one page per notebook with its stored
outputs, pictures and the widgets' static renderings (each page offers its .ipynb for download); then the
results pages of docs/. The table of contents is read from the folders, so a new notebook gets its page.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "book"
PARTS = {"part1": "Part 1 · Masked-LM pretraining from scratch", "part2": "Part 2 · The input BERT really reads",
         "part3": "Part 3 · What pretraining is for", "part4": "Part 4 · Speed", "part5": "Part 5 · After BERT"}
DOCS = ["results-part1", "results-part2", "results-part3", "results-part4", "results-part5", "performance",
        "library", "testing"]

CONF = '''
project = "How BERT learns"
author = "The MLM teaching notebooks authors"
extensions = ["myst_nb"]
nb_execution_mode = "off"              # the stored outputs are the book: nothing is re-run
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header", "myst.xref_missing", "mystnb.unknown_mime_type", "misc.highlighting_failure"]
exclude_patterns = ["_build"]
html_theme = "sphinx_book_theme"
html_title = "How BERT learns"
html_theme_options = {"use_download_button": True, "show_toc_level": 2, "home_page_in_toc": True}
html_static_path = []
'''


# A course notebook's name: two digits, then lower-case words (`05_training.ipynb`). JupyterLab's "Duplicate"
# (`05_training-Copy1.ipynb`) and other stray files are not chapters (mlm_lib.course.student.NOTEBOOK_NAME).
NOTEBOOK_NAME = re.compile(r"[0-9][0-9]_[a-z0-9_]+\.ipynb")


def notebooks() -> list[Path]:
    found = sorted((ROOT / "notebooks").glob("*/[0-9][0-9]_*.ipynb"))
    for stray in (p for p in found if not NOTEBOOK_NAME.fullmatch(p.name)):
        print(f"book: left out {stray.relative_to(ROOT)} (not a course notebook's name, NN_words.ipynb: a copy?)",
              file=sys.stderr)
    return [p for p in found if NOTEBOOK_NAME.fullmatch(p.name)]


def readable(paths: list[Path]) -> None:
    """Every notebook must be JSON before Sphinx reads it: a broken one is named here, not 67 lines into Sphinx."""
    for path in paths:
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            raise SystemExit(f"book: {shown} is not a readable notebook ({str(err)[:120]}); restore it, e.g. "
                             f"`git checkout -- {shown}`")


def title(path: Path) -> str:
    first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"]).splitlines()[0]
    return first.lstrip("# ").strip()


def toc() -> str:
    """The landing page's hidden table of contents: one caption per part, its notebooks in order, then docs/."""
    blocks = []
    for key, caption in PARTS.items():
        pages = [f"notebooks/{p.parent.name}/{p.stem}" for p in notebooks() if p.parent.name.startswith(key)]
        if pages:
            blocks.append(f":::{{toctree}}\n:caption: {caption}\n:maxdepth: 1\n\n" + "\n".join(pages) + "\n:::")
    docs = [f"docs/{name}" for name in DOCS if (ROOT / "docs" / f"{name}.md").exists()]
    blocks.append(":::{toctree}\n:caption: Results and reference\n:maxdepth: 1\n\n" + "\n".join(docs) + "\n:::")
    return "\n\n".join(blocks)


def landing_page() -> str:
    """README, with its links to notebook folders and files made links the book can follow, and the contents."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for p in notebooks():
        text = text.replace(f"| `{p.stem}` |", f"| [`{p.stem}`](notebooks/{p.parent.name}/{p.stem}.ipynb) |")
    return text + "\n\n" + toc() + "\n"


def source_tree() -> Path:
    src = OUT / "src"
    if src.exists():
        shutil.rmtree(src)
    (src / "docs").mkdir(parents=True)
    (src / "conf.py").write_text(CONF, encoding="utf-8")
    (src / "index.md").write_text(landing_page(), encoding="utf-8")
    for name in DOCS:
        page = ROOT / "docs" / f"{name}.md"
        if page.exists():
            shutil.copy(page, src / "docs" / page.name)
    for p in notebooks():
        (src / "notebooks" / p.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(p, src / "notebooks" / p.parent.name / p.name)
    return src


def build() -> float:
    start = time.perf_counter()
    readable(notebooks())
    try:
        import sphinx  # noqa: F401  (the book's own environment has it; the course's does not)
    except ModuleNotFoundError:
        raise SystemExit("book: Sphinx is not installed in this Python: build the book with `make book`, which "
                         "makes its own environment (.venv-book) from docs/book-requirements.txt") from None
    src = source_tree()
    html = OUT / "html"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-j", "auto", str(src), str(html)])
    if done.returncode:
        raise SystemExit(f"book: Sphinx failed (exit {done.returncode}); its message is above")
    return time.perf_counter() - start


def check() -> int:
    """Every notebook and docs page has its HTML page, with the notebook's title and its pictures; returns the
    page count."""
    html = OUT / "html"
    missing = []
    for p in notebooks():
        page = html / "notebooks" / p.parent.name / f"{p.stem}.html"
        if not page.exists():
            missing.append(str(page))
            continue
        text = page.read_text(encoding="utf-8")
        images = len(re.findall(r"<img ", text))
        stored = sum("image/png" in json.dumps(c.get("outputs", [])) for c in json.loads(p.read_text())["cells"])
        if title(p).split(":")[0] not in text or images < min(stored, 1):
            missing.append(f"{page} (title or pictures missing: {images} images for {stored} stored)")
    missing += [str(html / "docs" / f"{n}.html") for n in DOCS
                if (ROOT / "docs" / f"{n}.md").exists() and not (html / "docs" / f"{n}.html").exists()]
    if missing or not (html / "index.html").exists() or not (html / "search.html").exists():
        raise SystemExit("book: pages missing or incomplete:\n  " + "\n  ".join(missing or ["index or search"]))
    return len(list(html.rglob("*.html")))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="after building, check every page is there")
    args = parser.parse_args(argv)
    seconds = build()
    print(f"book: {OUT / 'html' / 'index.html'} ({seconds:.0f} s)")
    if args.check:
        print(f"book: {check()} pages; every notebook ({len(notebooks())}) and docs page has one")


if __name__ == "__main__":
    main()
