"""The operations every door offers, declared once (`catalog`), with their arguments
(`arguments`) and the options of a run with the session defaults that fill them
(`run_options`)."""
