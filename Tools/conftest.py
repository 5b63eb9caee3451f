"""How Tools/test's pytest run (-n 4 --dist loadfile) deals its tests out.

xdist's loadfile keeps a file's tests in one worker (a module's shared server
and its order-dependent checks stay in one process), and sends the files with
the most tests first. The longest tests are in files with few: the chaos test
(two cases of about 40 s each on an idle machine) was sent last, and for its
last 65 s of a 138 s run the other three workers had nothing left to do. So
the long files go first, and the chaos test's cases, which share nothing (each
has its own server and ledger under its own tmp_path), go to two workers.
"""

from __future__ import annotations

from typing import Any

import pytest

# Files whose tests take longest, longest first (measured with --durations).
LONG_FIRST = (
    "Tools/devserver/tests/test_chaos.py",
    "Tools/tests/test_proof_bundles.py",
    "Tools/devserver/tests/test_contract.py",
)
# Files whose tests share no fixture: each test is a unit of its own.
EACH_TEST_APART = ("Tools/devserver/tests/test_chaos.py",)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LongFirstScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return nodeid if file in EACH_TEST_APART else file

        def _assign_work_unit(self, node: Any) -> None:
            # The queue is filled once, most tests first; the long units are
            # moved to its front before the first is handed out.
            if not getattr(self, "long_first", False):
                self.long_first = True
                for file in reversed(LONG_FIRST):
                    for scope in [s for s in self.workqueue if s.split("::", 1)[0] == file]:
                        self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return LongFirstScheduling(config, log)
