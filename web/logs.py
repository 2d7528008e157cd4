"""The server's log lines: plain text for a terminal, or one JSON object per line (`LOG_FORMAT=json`) for a collector.

Every line carries the request id (see `request_ids`), uvicorn's access
lines included: uvicorn is started without a logging config of its own, so
its loggers reach the same handler. An access line keeps a query's parameter
names and drops their values: the chat page streams the visitor's question in
its URL, and what visitors type (an API key pasted by mistake, an email
address) belongs in the answer log, under its retention, not in every log
collector the server's output reaches.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode

from answer.contract.result import Answer

from .request_ids import WithRequestId

FORMATS = ("text", "json")
log = logging.getLogger("web.answers")
_TEXT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"


class JsonLines(logging.Formatter):
    """One JSON object per record: time (UTC, ISO 8601), level, logger, message, request id, and the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


class QueryValuesDropped(logging.Filter):
    """uvicorn's access line with each query value left out: "GET /ask/stream?question=&thread=" (see the module)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) > 2 and isinstance(args[2], str) and "?" in args[2]:
            path, _, query = args[2].partition("?")
            names = urlencode([(name, "") for name, _ in parse_qsl(query, keep_blank_values=True)])
            record.args = (*args[:2], f"{path}?{names}", *args[3:])
        return True


def configure(log_format: str, level: int = logging.INFO) -> None:
    """Route every logger (uvicorn's too) to one stderr handler in the chosen format; safe to call again."""
    if log_format not in FORMATS:
        raise ValueError(f"LOG_FORMAT must be one of {', '.join(FORMATS)}, got {log_format!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(level)  # a library that sets its own logger to DEBUG (bm25s does) is not heard below `level`
    handler.addFilter(WithRequestId())
    handler.setFormatter(JsonLines() if log_format == "json" else logging.Formatter(_TEXT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", log.name):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
        logger.disabled = False  # a library's logging.config call may have switched off loggers that existed then
        logger.setLevel(logging.NOTSET)  # `level` decides, whatever an earlier uvicorn.Config(log_level=…) set
    access = logging.getLogger("uvicorn.access")
    access.filters[:] = [f for f in access.filters if not isinstance(f, QueryValuesDropped)] + [QueryValuesDropped()]


def answered(answer: Answer) -> None:
    """One line per finished answer (an `Answerer` observer), for the operator beside the access line: its id (the
    audit page's), outcome, state, claims and seconds, under the request's id. Never the question: see the module."""
    written = answer.written
    log.info("answer %s: %s, %s, %d claim%s%s, %.2f s", answer.id, answer.outcome, answer.state, len(answer.claims),
             "" if len(answer.claims) == 1 else "s",
             f", written {len(written.sentences)} sentence(s)" if written is not None and written.shown else "",
             answer.timings.get("total", 0.0))
