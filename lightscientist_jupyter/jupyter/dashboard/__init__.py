"""The live dashboard a notebook displays for one project, and the cards it is made of.

`view` is the dashboard (its threads and its redraws); `display` shows one for a run or a
project on disk; the cards (`graph`, `gate`, `budget_card`, `handoff_card`, `run_controls`,
`status_line`, `timeline`, `workers`) each draw one part, with their anywidget front ends
built from `labextension/src/widgets/` into `static/` (loaded by `widgets`; `style/theme.css` is
shared with the side panel).
"""
