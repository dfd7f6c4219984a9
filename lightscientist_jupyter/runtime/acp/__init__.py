"""Coding agents as layer-3 sessions, over the Agent Client Protocol (ACP).

`launch` starts an agent's process (its own process group, only the environment its table
lists, every line it writes checked to be JSON-RPC), `client` is our side of the protocol
(session updates become layer-3 events, permission requests are answered by the table's
policy or by whoever the caller names), and `session.AcpSession` drives one agent session
turn by turn from plain threads, with one clear line for every way an agent can fail.
"""
