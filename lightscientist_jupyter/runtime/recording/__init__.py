"""Recordings of model calls and their replay: the recorder (`recorder`) and the forms it
stores messages in (`forms`), the seal that chains a recording's lines (`seal`), how calls are
named (`tape`), reading a recording back (`recorded`), the replay model (`replay`) and the
order of layer 2's updates kept for a strict replay (`update_order`)."""
