"""Turn a model specification into a LangChain chat model, or a clear error before any work.

- `offline` (the default when nothing is configured): the deterministic offline scientist, a
  demo and test driver that needs no network. `offline:loops=N` makes its experiment loop run
  N batches.
- `provider:model` (e.g. `openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-5`): through
  LangChain's `init_chat_model`; the provider's key must be in the environment.
- any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio) with `base_url`: through
  `ChatOpenAI` on the chat-completions API (most such servers do not serve the Responses API).
- `replay:PATH[,lenient]`: the answers of a recorded run (`--record`), from a recording file,
  a folder of them, or a workspace (see `runtime/recording/replay.py`); no network.

Transient failures (429, 5xx, timeouts, refused connections) are retried with backoff by
`retry_middleware`; a call that still fails ends the worker `failed`, never the process.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from lightscientist_jupyter.errors import ModelConfigError

OFFLINE = "offline"
OFFLINE_LABEL = "lightscientist-offline"
"""The offline model's type, as a recording's run line names it (`recording.model_label`)."""
REPLAY = "replay"

_PROVIDERS: dict[str, tuple[str, str | None]] = {
    # provider: (package, key variable or None)
    "openai": ("langchain_openai", "OPENAI_API_KEY"),
    "anthropic": ("langchain_anthropic", "ANTHROPIC_API_KEY"),
    "google_genai": ("langchain_google_genai", "GOOGLE_API_KEY"),
    "mistralai": ("langchain_mistralai", "MISTRAL_API_KEY"),
    "groq": ("langchain_groq", "GROQ_API_KEY"),
    "deepseek": ("langchain_deepseek", "DEEPSEEK_API_KEY"),
    "ollama": ("langchain_ollama", None),
}


def offline_library(model: Any) -> Path | None:
    """The local library the offline scientist's workers search (shipped with it), or None.
    A replay of the offline scientist's run searches it too, as the recorded workers did."""
    labels = list(getattr(getattr(model, "tape", None), "models", None) or [])
    replays_offline = bool(labels) and all(label == OFFLINE_LABEL for label in labels)
    if type(model).__name__ != "OfflineScientistModel" and not replays_offline:
        return None
    from lightscientist_jupyter.offline import survey

    return survey.LIBRARY


def default_spec() -> str:
    """`LIGHTSCIENTIST_MODEL`, else `offline`."""
    return os.environ.get("LIGHTSCIENTIST_MODEL") or OFFLINE


def _parse_options(text: str) -> dict[str, str]:
    options = {}
    for part in filter(None, text.split(",")):
        key, sep, value = part.partition("=")
        if not sep:
            raise ModelConfigError(f"model option '{part}' must look like key=value")
        options[key.strip()] = value.strip()
    return options


def check_spec(
    spec: str | None = None, *, base_url: str | None = None, api_key: str | None = None
) -> str:
    """`spec` checked as `resolve_model` checks it, without importing a provider or building
    a model (`ModelConfigError` naming what to fix); returns the spec to resolve."""
    spec = (spec or "").strip() or default_spec()
    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    if spec == OFFLINE or spec.startswith(OFFLINE + ":"):
        _offline_loops(spec)
        return spec
    if spec.startswith(REPLAY + ":") or base_url:
        return spec
    provider, sep, name = spec.partition(":")
    if not sep or not name:
        raise ModelConfigError(
            f"model '{spec}' must be 'offline', 'provider:model' (e.g. "
            "openai:gpt-4.1-mini) or a model name with --base-url"
        )
    if provider not in _PROVIDERS:
        raise ModelConfigError(
            f"unknown model provider '{provider}'; known: "
            f"{', '.join(sorted(_PROVIDERS))} (or use --base-url for an "
            "OpenAI-compatible server)"
        )
    package, key_var = _PROVIDERS[provider]
    if importlib.util.find_spec(package) is None:
        raise ModelConfigError(
            f"provider '{provider}' needs the package {package.replace('_', '-')}; pip install it"
        )
    if key_var and not (api_key or os.environ.get(key_var)):
        raise ModelConfigError(
            f"model '{spec}' needs an API key: set {key_var} in the "
            "environment (it never reaches workers, logs or events)"
        )
    return spec


def _offline_loops(spec: str) -> int:
    options = _parse_options(spec.partition(":")[2])
    try:
        loops = int(options.pop("loops", "2"))
    except ValueError:
        raise ModelConfigError("offline model option 'loops' must be an integer") from None
    if options:
        raise ModelConfigError(
            f"unknown offline model option(s): {', '.join(options)}; "
            "the offline model takes loops=N"
        )
    return loops


def resolve_model(
    spec: str | None = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
) -> BaseChatModel:
    """Build the chat model named by `spec`; raises `ModelConfigError` naming what to fix."""
    spec = check_spec(spec, base_url=base_url, api_key=api_key)
    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    if spec == OFFLINE or spec.startswith(OFFLINE + ":"):
        from lightscientist_jupyter.offline.model import OfflineScientistModel

        return OfflineScientistModel(loops=_offline_loops(spec))
    if spec.startswith(REPLAY + ":"):
        return _replay_model(spec.partition(":")[2])
    if base_url:
        from langchain_openai import ChatOpenAI

        name = spec.split(":", 1)[1] if spec.startswith("openai:") else spec
        key = SecretStr(api_key or os.environ.get("OPENAI_API_KEY") or "not-needed")
        return ChatOpenAI(
            model=name,
            base_url=base_url,
            api_key=key,
            max_retries=0,
            timeout=timeout,
            use_responses_api=False,
        )
    provider, _, name = spec.partition(":")
    from langchain.chat_models import init_chat_model

    kwargs: dict[str, Any] = {"timeout": timeout, "max_retries": 0}
    if api_key:
        kwargs["api_key"] = api_key
    if provider == "openai":
        kwargs["use_responses_api"] = False
    try:
        model: BaseChatModel = init_chat_model(name, model_provider=provider, **kwargs)
        return model
    except Exception as exc:  # the provider's own validation, reported plainly
        raise ModelConfigError(f"cannot set up model '{spec}': {exc}") from None


def _replay_model(text: str) -> BaseChatModel:
    from lightscientist_jupyter.runtime.recording.recorded import Tape
    from lightscientist_jupyter.runtime.recording.replay import ReplayChatModel

    path, *flags = [part.strip() for part in text.split(",")]
    unknown = [f for f in flags if f not in ("lenient", "strict")]
    if not path or unknown:
        raise ModelConfigError(
            f"model 'replay:{text}' must be replay:PATH or replay:PATH,lenient"
            + (f" (unknown option: {', '.join(unknown)})" if unknown else "")
        )
    lenient = "lenient" in flags
    return ReplayChatModel(tape=Tape.load(path, strict=not lenient), lenient=lenient)


def retry_middleware(max_retries: int = 3, initial_delay: float = 1.0) -> Any:
    """Retry transient model failures with exponential backoff, then raise."""
    from langchain.agents.middleware import ModelRetryMiddleware

    return ModelRetryMiddleware(
        max_retries=max_retries,
        retry_on=is_transient,
        on_failure="error",
        initial_delay=initial_delay,
        backoff_factor=2.0,
        max_delay=30.0,
        jitter=True,
    )


def is_transient(exc: BaseException) -> bool:
    """429, 5xx, timeouts and refused connections are worth another try; the rest is not."""
    status = getattr(exc, "status_code", None) or getattr(
        getattr(exc, "response", None), "status_code", None
    )
    if isinstance(status, int):
        return status == 429 or status >= 500
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(
        names
        & {
            "APIConnectionError",
            "APITimeoutError",
            "TimeoutError",
            "ConnectionError",
            "ConnectError",
            "ReadTimeout",
            "ConnectTimeout",
            "RemoteProtocolError",
        }
    )
