import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "Tests" / "IAPVerifyTests" / "Fixtures"


@pytest.fixture(scope="session")
def expectations():
    return json.loads((ROOT / "Tests" / "shared" / "expectations.json").read_text())["cases"]


@pytest.fixture(scope="session")
def fixtures():
    return FIXTURES
