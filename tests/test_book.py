"""The book's table of contents is read from the folders (docs/build_book.py): every notebook and docs page is in
it, by part, and README's course map links each notebook. (CI builds the book itself: .ci/run, `make book` with
`--check`, which fails when a page is missing.)"""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("build_book", ROOT / "docs" / "build_book.py")
book = importlib.util.module_from_spec(spec)
spec.loader.exec_module(book)


def test_every_notebook_has_its_place_in_the_book():
    toc, landing = book.toc(), book.landing_page()
    notebooks = book.notebooks()
    assert len(notebooks) >= 17
    for path in notebooks:
        assert f"notebooks/{path.parent.name}/{path.stem}" in toc
        assert f"(notebooks/{path.parent.name}/{path.stem}.ipynb)" in landing, f"README's map lacks {path.stem}"
    assert toc.count(":caption: Part") == len({p.parent.name for p in notebooks})
    for name in book.DOCS:
        assert (ROOT / "docs" / f"{name}.md").exists() and f"docs/{name}" in toc


def test_the_book_is_built_from_the_stored_notebooks_without_running_them():
    assert 'nb_execution_mode = "off"' in book.CONF
    requirements = (ROOT / "docs" / "book-requirements.txt").read_text()
    assert "torch" not in requirements and "myst-nb" in requirements
