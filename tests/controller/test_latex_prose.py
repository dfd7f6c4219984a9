"""The provenance checks read a LaTeX source (controller/latex_prose.py, provenance.py): its
body's prose with the line numbers of the source, and nothing a reader does not read as a
claim."""

from __future__ import annotations

import pytest

from lightscientist_jupyter.controller.provenance import cited_keys, written_numbers

pytestmark = pytest.mark.unit

PAPER = r"""\documentclass[11pt]{article}
\usepackage[margin=2.5cm]{geometry}
\newcommand{\lr}{0.75}
\begin{document}
\title{Warmup}
\maketitle
Final loss 0.0431 \cite{goyal2017, liu2020}. % 0.999 is only said here
Warmup helped in 12.5\% of the runs; 4.303 is a t quantile. % not measured
\begin{figure}[t]
\includegraphics[width=0.8\linewidth]{figures/figure1.png}
\caption{Loss at lr 0.1.}\label{fig:0.5}
\end{figure}
\vspace{1.5em}A line.\\[2.5pt]
See \url{https://example.org/v1.25} and \citep[p.~3]{kingma2015}.
\begin{verbatim}
python run.py --lr 0.33
\end{verbatim}
\begin{thebibliography}{9}
\bibitem{x} Someone, 2.75 pages.
\end{thebibliography}
\bibliographystyle{plain}
\bibliography{references}
\end{document}
Text after the end, 8.88.
"""


def test_the_numbers_of_the_body_keep_their_source_lines():
    assert written_numbers(PAPER, latex=True) == [
        ("0.0431", 7, False),
        ("12.5%", 8, True),
        ("4.303", 8, True),
        ("0.1", 11, False),
    ]


def test_the_citations_of_the_body_keep_their_source_lines():
    assert cited_keys(PAPER, latex=True) == [
        ("goyal2017", 7),
        ("liu2020", 7),
        ("kingma2015", 14),
    ]


def test_an_escaped_percent_is_no_comment_and_a_fragment_is_all_body():
    fragment = "A rise of 3.5\\% over 0.25. % 9.75 in a comment\n\\\\% 1.5 after a line break\n"
    assert written_numbers(fragment, latex=True) == [("3.5%", 1, False), ("0.25", 1, False)]


def test_markdown_is_read_as_before():
    text = "Loss 0.5 <!-- not measured -->\n\n```\n1.25\n```\n12.5\\% and `0.75`\n"
    assert written_numbers(text) == [("0.5", 1, True), ("12.5", 6, False)]
