"""Keep secrets and bulk out of events and logs: redact key-like strings, clip long text."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any

_PATTERNS = [
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{12,}"),  # OpenAI/Anthropic style keys
    re.compile(r"\b(ghp|gho|ghs|github_pat)_[A-Za-z0-9_]{16,}"),  # GitHub tokens
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack tokens
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access keys
    re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{5,}"),  # JWTs
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._\-]{16,}"),
    re.compile(r"(?i)((?:api[_-]?key|token|secret|password|passwd)\s*[=:]\s*)['\"]?[^\s'\"]{6,}"),
]
_LITERALS = [
    ("sk-", "pk-", "rk-"),
    ("ghp_", "gho_", "ghs_", "github_pat_"),
    ("xox",),
    ("akia",),
    ("eyj",),
    ("bearer",),
    ("api", "token", "secret", "passw"),
]
"""For each pattern, the (lower-case) texts one of which any match contains: a pattern whose
texts are all absent is not run, which keeps redaction of long texts cheap."""
SECRET_ENV = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)")


def _env_secrets() -> list[str]:
    return [v for k, v in os.environ.items() if SECRET_ENV.search(k) and len(v) >= 8]


def redact(text: str, secrets: list[str] | None = None) -> str:
    """Replace anything that looks like a key or token with `[REDACTED]` (`secrets`: the
    environment's secret values, when the caller read them once for many texts)."""
    for value in _env_secrets() if secrets is None else secrets:
        text = text.replace(value, "[REDACTED]")
    low = text.lower()
    for pattern, literals in zip(_PATTERNS, _LITERALS, strict=True):
        if not any(literal in low for literal in literals):
            continue
        if pattern.groups and pattern.pattern.startswith("(?i)(("):
            text = pattern.sub(lambda m: m.group(1) + "[REDACTED]", text)
        else:
            text = pattern.sub("[REDACTED]", text)
    return text


def redactor() -> Callable[[str], str]:
    """`redact` with the environment's secrets read once, for many texts in a row."""
    secrets = _env_secrets()
    return lambda text: redact(text, secrets)


def clip(text: str, limit: int = 2000) -> str:
    """Cut `text` to `limit` characters, keeping head and tail."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head - 40
    return f"{text[:head]}\n… [{len(text) - head - tail} characters cut] …\n{text[-tail:]}"


def safe(value: Any, limit: int = 2000) -> str:
    """A redacted, clipped string form of a tool argument or result."""
    if not isinstance(value, str):
        try:
            value = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            value = str(value)
    return clip(redact(value), limit)
