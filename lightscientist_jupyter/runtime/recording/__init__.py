"""Recordings of model calls and their replay: the recorder (`recorder`) and the forms it
stores messages in (`forms`), the schema of a recording's lines (`lines`), the seal that chains
them (`seal`), how calls are named (`tape`), reading a recording back (`recorded`), the replay
model (`replay`) and the order of layer 2's updates kept for a strict replay (`update_order`)."""
