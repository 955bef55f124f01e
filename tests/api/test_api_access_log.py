"""The access log's cheap parts write what the plain ways wrote: the time stamp (written once a
second) and the made-up request ids (uuid4's, from random bytes read in batches)."""

from __future__ import annotations

import logging
import threading
import uuid

import orjson
from contrastgen.api.access_log import JsonFormatter, _RandomIds, _request_id


def _record(created: float) -> logging.LogRecord:
    record = logging.LogRecord("contrastgen.api.access", logging.INFO, __file__, 1, "", (), None)
    record.created = created
    record.msecs = int((created - int(created)) * 1000) + 0.0
    record.__dict__.update({"event": "request", "status": 200})
    return record


def test_the_time_stamp_is_strftime_s_each_second():
    formatter = JsonFormatter()
    plain = logging.Formatter()
    plain.converter = JsonFormatter.converter
    for created in (1_700_000_000.001, 1_700_000_000.999, 1_700_000_001.0, 1_700_000_001.5, 1_699_999_999.25,
                    1_700_000_000.5):
        line = orjson.loads(formatter.format(_record(created)))
        record = _record(created)
        assert line["ts"] == plain.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z"
        assert (line["event"], line["status"]) == ("request", 200)


def test_made_up_request_ids_are_uuid4_hex_and_never_repeat():
    ids = _RandomIds()
    made = [ids.next() for _ in range(3 * _RandomIds.BATCH + 5)]  # past a refill or three
    assert len(set(made)) == len(made)
    for text in made:
        value = uuid.UUID(hex=text)
        assert value.hex == text and value.version == 4 and value.variant == uuid.RFC_4122
    shared = _RandomIds()
    by_thread: list[str] = []
    threads = [threading.Thread(target=lambda: by_thread.extend(shared.next() for _ in range(600)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(by_thread)) == len(by_thread) == 2400
    assert _request_id({"headers": [(b"x-request-id", b"trace-1")]}) == "trace-1"
    assert uuid.UUID(hex=_request_id({"headers": []})).version == 4
