"""What model calls cost: tokens (`tokens`), prices (`prices`), the per-runtime meter with its
budget gate (`usage`) and the LangChain callback through which each session's calls reach it
(`usage_callback`)."""
