"""pytest set-up of the differential suite: import paths, Apple's clocks pinned, the report."""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (HERE, ROOT / "Tests" / "shared" / "fakeapple"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import parity  # noqa: E402


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    if not parity.RESULTS:
        return
    terminalreporter.section("iapverify against Apple's app-store-server-library")
    for line in parity.report_lines():
        terminalreporter.write_line(line)
