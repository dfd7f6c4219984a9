"""A Markdown file's change drawn as it reads (`jupyter.markdown_diff`): the new text
rendered, insertions in `<ins>`, deletions kept in place in `<del>`, the document's shape
kept, and nothing of the file's own HTML let through."""

from __future__ import annotations

from lightscientist_jupyter.jupyter import markdown_diff
from lightscientist_jupyter.jupyter.markdown_diff import rendered_diff

OLD = """\
# Plan

The model is a small MLP trained for 20 epochs on the full data.

- warmup of 5 epochs
- batch size 64

| lr | loss |
|---|---|
| 0.1 | 0.52 |
"""


def test_a_changed_word_is_struck_through_and_its_replacement_marked_in_place():
    new = OLD.replace("20 epochs", "30 epochs")
    html = rendered_diff(OLD, new)
    assert html is not None
    assert "trained for <del>20</del><ins>30</ins> epochs on the full data." in html
    assert "<h1>Plan</h1>" in html  # what did not change is drawn as it was


def test_lines_added_and_removed_keep_their_block_outside_the_marks():
    new = OLD.replace("- batch size 64\n", "- three seeds\n").replace("# Plan", "# Plan\n\n## Why")
    html = rendered_diff(OLD, new)
    assert html is not None
    assert "<h2><ins>Why</ins></h2>" in html
    assert "<li><del>batch size 64</del></li>" in html
    assert "<li><ins>three seeds</ins></li>" in html


def test_a_table_row_is_marked_cell_by_cell_and_stays_a_row():
    new = OLD + "| 0.01 | 0.51 |\n"
    html = rendered_diff(OLD, new)
    assert html is not None
    assert "<td><ins> 0.01 </ins></td>" in html and "<td><ins> 0.51 </ins></td>" in html
    assert html.count("<table>") == 1


def test_the_files_own_html_and_marks_are_never_kept():
    evil = '<img src=x onerror="alert(1)">\n\n[link](javascript:alert(1))\n'
    html = rendered_diff(OLD, OLD + markdown_diff.INS + "\n" + evil)
    assert html is not None
    assert "<img" not in html and 'href="javascript' not in html
    assert "&lt;img" in html
    assert markdown_diff.INS not in html and html.count("<ins>") == html.count("</ins>")


def test_a_new_file_is_all_inserted_and_a_huge_one_is_left_to_the_source_diff():
    html = rendered_diff("", "# Notes\n\nfirst line\n")
    assert html == "<h1><ins>Notes</ins></h1>\n<p><ins>first line</ins></p>\n"
    huge = "line\n" * (markdown_diff.MAX_LINES + 1)
    assert rendered_diff("", huge) is None


def test_only_the_blocks_that_changed_are_drawn_with_the_one_before_each():
    log = "# Log\n\n" + "".join(
        f"## entry {i}\n\n<!-- entry: {i} -->\nDone {i}.\n\n" for i in range(9)
    )
    html = rendered_diff(log, log + "## entry 9\n\nDone 9, the new one.\n")
    assert html is not None
    assert "<h2><ins>entry 9</ins></h2>" in html and "Done 9, the new one." in html
    assert "Done 8." in html  # the block before the change, for context
    assert "Done 3." not in html and "<h1>Log</h1>" not in html
    assert html.startswith("<p>…</p>")  # the blocks left out
    assert "entry: 8" not in html  # an HTML comment is invisible, as when rendered
