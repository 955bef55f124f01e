"""Fixtures for the verifier's tests: the hand-built scene, fixed rules, fresh valid cases."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from verify_cases import VALID, as_record, fixed_rules, make_graph

from contrastgen.verify.rules import VerifyRules


@pytest.fixture
def graph() -> dict[str, Any]:
    return make_graph()


@pytest.fixture
def rules() -> VerifyRules:
    return fixed_rules()


@pytest.fixture
def valid() -> dict[str, tuple[str, dict]]:
    """A fresh deep copy per test, so tampering never leaks between tests."""
    return copy.deepcopy(VALID)


@pytest.fixture
def record():
    return as_record
