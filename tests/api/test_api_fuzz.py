"""Property-based fuzzing of the whole OpenAPI schema against a real server: no 5xx, ever.

Schemathesis generates requests that fit the schema the server publishes (positive) and ones
that break it (negative); a field added without validation, or a body the parser chokes on,
shows up as a 500 here, and every response must match its documented status, type and schema.
The run is bounded (examples per operation, derandomised) so it stays fast and reproducible.
(Schemathesis' own `from_fixture` loader does not work with this pytest, so the strategies are
driven by hypothesis directly.)
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.generation.modes import GenerationMode

OPERATIONS = [("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/version"),
              ("GET", "/v1/templates"), ("POST", "/v1/perturb"), ("POST", "/v1/perturb/batch"),
              ("POST", "/v1/verify"), ("POST", "/v1/evaluate")]
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
# Examples per operation. /v1/evaluate's body (records with evidence, predictions in several
# formats) is the slowest schema to generate from, about a second per example on this machine.
EXAMPLES = {"GET": 5, "POST": 10, "/v1/evaluate": 5}
CASES = [(method, path, mode) for method, path in OPERATIONS
         for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
         if method == "POST" or mode is GenerationMode.POSITIVE]  # a GET takes no input to break


@pytest.fixture(scope="module")
def api_schema(server):
    return schemathesis.openapi.from_url(f"{server.url}/openapi.json")


def test_every_operation_is_fuzzed(api_schema):
    found = {(op.ok().method.upper(), op.ok().path) for op in api_schema.get_all_operations()}
    assert found == set(OPERATIONS)


@pytest.mark.parametrize("method, path, mode", CASES)
def test_no_server_errors_and_responses_match_the_schema(api_schema, server, method, path, mode):
    operation = api_schema[path][method]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES.get(path, EXAMPLES[method]), deadline=None,
              derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    def run(case):
        case.call_and_validate(base_url=server.url, checks=CHECKS)

    run()
