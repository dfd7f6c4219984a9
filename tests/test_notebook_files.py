"""A notebook file read and written by `values.notebook` without nbformat: the same values
as nbformat reads, the same bytes as it (and so JupyterLab) writes, the same schema checked,
and nbformat's import (0.7 s of jsonschema's grammar) left out of every run."""

from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest
from nbformat import v4

from lightscientist_jupyter.values import notebook


def every_kind_of_cell() -> str:
    """A notebook as nbformat writes it: each kind of cell and output, multi-line texts,
    an attachment, the keys nbformat drops when it saves."""
    nb = v4.new_notebook()
    nb.metadata.update(kernelspec={"name": "python3", "display_name": "Python 3"}, signature="s")
    code = v4.new_code_cell("import numpy\nprint(1)\n\nx", execution_count=3)
    code.metadata["trusted"] = True
    code.outputs = [
        v4.new_output("stream", name="stdout", text="a\nb\n"),
        v4.new_output(
            "execute_result",
            execution_count=3,
            data={
                "text/plain": "1\n2",
                "image/png": "iVBOR\nw0KG",
                "image/svg+xml": "<svg>\n</svg>",
                "application/json": {"a": [1, 2]},
            },
        ),
        v4.new_output("display_data", data={"text/html": "<b>\nx</b>"}),
        v4.new_output("error", ename="ValueError", evalue="bad", traceback=["t1", "t2"]),
    ]
    markdown = v4.new_markdown_cell(
        "# Résumé\n\n![a](attachment:a.png)", attachments={"a.png": {"image/png": "AA\nBB"}}
    )
    nb.cells = [code, markdown, v4.new_raw_cell("raw\ntext\n")]
    return str(nbformat.writes(nb))


def test_a_notebook_reads_as_nbformat_reads_it_and_saves_byte_for_byte_as_it_does():
    text = every_kind_of_cell()
    ours, theirs = notebook.loads(text, "n.ipynb"), nbformat.reads(text, as_version=4)
    assert json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True)
    assert ours.cells[0].outputs[0].text == "a\nb\n"  # read as attributes, texts joined
    assert notebook.dumps(ours) == nbformat.writes(theirs) + "\n"
    made = notebook.new_notebook([("load", "code", "x = 1"), ("about", "markdown", "# A")], "w")
    nbformat.validate(json.loads(notebook.dumps(made)))  # what the offline worker writes


def test_reading_and_writing_a_notebook_imports_neither_nbformat_nor_jsonschema():
    probe = (
        "import sys\n"
        "from lightscientist_jupyter.values import notebook\n"
        "nb = notebook.loads(sys.stdin.read(), 'n.ipynb')\n"
        "notebook.dumps(notebook.new_notebook([('a', 'code', '1')], 'w'))\n"
        "print(sorted(m for m in ('nbformat', 'jsonschema') if m in sys.modules))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe],
        input=every_kind_of_cell(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout == "[]\n"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d["cells"][0].pop("source"), "code cell 1 lacks 'source'"),
        (
            lambda d: d["cells"][1].update(cell_type="prose"),
            "cell 2 has cell_type 'prose': use one of code, markdown, raw",
        ),
        (
            lambda d: d["cells"][1].update(id=d["cells"][0]["id"]),
            "cell id '{id}' is used twice (give each cell an id of its own)",
        ),
        (lambda d: d.update(metadata=3), "the notebook's metadata must be object"),
        (lambda d: d.pop("cells"), "the notebook must contain ['cells'] properties"),
    ],
)
def test_a_bad_notebook_is_one_line_naming_the_file_and_what_is_wrong(change, problem):
    raw = json.loads(every_kind_of_cell())
    first_id = raw["cells"][0]["id"]
    change(raw)
    with pytest.raises(notebook.NotebookProblem) as raised:
        notebook.loads(json.dumps(raw), "experiment/analysis.ipynb")
    assert str(raised.value) == (
        "experiment/analysis.ipynb is not a valid notebook: " + problem.format(id=first_id)
    )


def test_text_that_is_not_a_notebook_says_so():
    with pytest.raises(notebook.NotebookProblem) as raised:
        notebook.loads("{not json", "notes.ipynb")
    assert str(raised.value) == (
        "notes.ipynb is not a notebook (not nbformat JSON: Notebook does not appear to be "
        "JSON: '{not json')"
    )
    with pytest.raises(notebook.NotebookProblem, match="it has no 'nbformat' version"):
        notebook.loads('{"cells": []}', "notes.ipynb")


def test_an_older_notebook_is_upgraded_to_4_5():
    raw = json.loads(every_kind_of_cell())
    raw["nbformat_minor"] = 4
    for cell in raw["cells"]:
        del cell["id"]
    nb = notebook.loads(json.dumps(raw), "old.ipynb")
    assert (nb.nbformat, nb.nbformat_minor) == (4, 5)
    assert [cell.id for cell in nb.cells] == ["cell-1", "cell-2", "cell-3"]
    v3 = nbformat.v3.new_notebook(
        worksheets=[nbformat.v3.new_worksheet(cells=[nbformat.v3.new_code_cell(input="1+1")])]
    )
    converted = notebook.loads(nbformat.writes(v3, version=3), "v3.ipynb")  # by nbformat
    assert [(c.cell_type, c.source) for c in converted.cells] == [("code", "1+1")]
