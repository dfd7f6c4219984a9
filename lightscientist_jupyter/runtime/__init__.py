"""Layer 3: persistent worker sessions on LangGraph checkpoints."""
