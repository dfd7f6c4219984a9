"""A database URL as a user is shown it: without its password, and the server it names.

Two stores take a `postgresql://` URL — the sessions' checkpoints (`runtime.checkpoints.url`)
and the user's memory (`memory.postgres`) — and both name the server in a message the same way
(`database 'D' on HOST:PORT as user 'U'`, libpq's defaults filled in), with libpq's reason in a
few words; the password shows in neither, nor in a URL kept in a project's settings. A leaf:
psycopg (the `postgres` extra) is imported only when a URL is parsed.
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


def redact(url: str) -> str:
    """The URL without its password (in the authority or as a `password=` parameter)."""
    if "://" not in url:
        return url
    parts = urlsplit(url)
    if "@" not in parts.netloc and "password" not in parts.query:
        return url  # (urlunsplit would also drop the empty authority of sqlite:///PATH)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        netloc = f"{userinfo.split(':', 1)[0]}@{host}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "password"])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def where(url: str) -> str:
    """`database 'D' on HOST:PORT` (the libpq defaults filled in), never the password."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        info = conninfo_to_dict(url)
    except Exception:
        return f"'{redact(url)}'"
    host = str(info.get("host") or os.environ.get("PGHOST") or "localhost")
    port = str(info.get("port") or os.environ.get("PGPORT") or "5432")
    user = str(info.get("user") or os.environ.get("PGUSER") or "")
    database = str(info.get("dbname") or os.environ.get("PGDATABASE") or user or "postgres")
    return f"database '{database}' on {host}:{port}" + (f" as user '{user}'" if user else "")


def reason(exc: Exception, url: str) -> str:
    """libpq's reason in a few words, with any password taken out."""
    text = " ".join(str(exc).split())
    if "password authentication failed" in text:
        return "wrong password (it comes from the URL, PGPASSWORD or ~/.pgpass)"
    if "no password supplied" in text:
        return "a password is needed: give it in the URL, PGPASSWORD or ~/.pgpass"
    missing = re.search(r'database "([^"]+)" does not exist', text)
    if missing:
        return f"the database does not exist (create it: createdb {missing.group(1)})"
    if "Connection refused" in text or "could not connect" in text or "timeout" in text:
        return "the server is unreachable (is PostgreSQL running there?)"
    if "server closed the connection" in text:
        return "the server closed the connection (did it stop?)"
    password = _password(url)
    return text.replace(password, "***") if password else text


def _password(url: str) -> str:
    from psycopg.conninfo import conninfo_to_dict

    try:
        return str(conninfo_to_dict(url).get("password") or "")
    except Exception:
        return ""
