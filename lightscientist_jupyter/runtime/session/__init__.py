"""Worker sessions: one persistent deepagents graph per runtime, run turn by turn on a
LangGraph thread (`session`, `graphs`, `binding`), the lifecycle tools that end a turn, the
callbacks that turn a session's steps into events (`observe`), and each worker's record,
files, prompt and file tools."""
