"""The server's log lines: plain text for a terminal, or one JSON object per line (`LOG_FORMAT=json`) for a collector.

Every line carries the request id (see `request_ids`), uvicorn's access
lines included: uvicorn is started without a logging config of its own, so
its loggers reach the same handler.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

from .request_ids import WithRequestId

FORMATS = ("text", "json")
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


def configure(log_format: str, level: int = logging.INFO) -> None:
    """Route every logger (uvicorn's too) to one stderr handler in the chosen format; safe to call again."""
    if log_format not in FORMATS:
        raise ValueError(f"LOG_FORMAT must be one of {', '.join(FORMATS)}, got {log_format!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(WithRequestId())
    handler.setFormatter(JsonLines() if log_format == "json" else logging.Formatter(_TEXT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
