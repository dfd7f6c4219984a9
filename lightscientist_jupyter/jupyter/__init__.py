"""The Jupyter shell: magic, widgets and the server extension behind the side panel.

Kept import-light on purpose: importing this package loads nothing from Jupyter, so each
module (`server`, …) pulls in only what it needs when it is used.
"""
