"""validate-json --serve: each request line is answered with what one run of
validate-json with the same arguments exits with and prints, and a request it
cannot read is answered, not the end of the process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

VALIDATE = Path(__file__).resolve().parent.parent / "validate-json"

# A document of the `config_value` definition, one of the wrong shape, one not
# JSON; log lines missing their fields, no lines at all, no such definition.
# (definition, lines, text)
CASES = [
    ("config_value", False, json.dumps({"key": "actor", "source": "config", "value": "Dana"})),
    ("config_value", False, json.dumps({"key": "actor", "value": 5, "extra": True})),
    ("config_value", False, "not json"),
    ("log_line", True, json.dumps({"position": 1}) + "\n\n" + json.dumps({}) + "\n"),
    ("log_line", True, "\n"),
    ("no_such_definition", False, "{}"),
]


def one_run(definition: str, lines: bool, text: str) -> dict:
    command = [sys.executable, str(VALIDATE)] + (["--lines"] if lines else []) + [definition]
    run = subprocess.run(command, input=text, capture_output=True, text=True, timeout=60)
    return {"status": run.returncode, "stdout": run.stdout, "stderr": run.stderr}


def serve(request_lines: list[str]) -> list[dict]:
    run = subprocess.run([sys.executable, str(VALIDATE), "--serve"], input="".join(request_lines),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return [json.loads(line) for line in run.stdout.splitlines()]


def test_each_answer_is_what_one_run_gives() -> None:
    requests = [json.dumps({"definition": d, "lines": lines, "text": text}) + "\n" for d, lines, text in CASES]
    answers = serve(requests)
    assert answers == [one_run(*case) for case in CASES]
    # Not vacuous: the cases include a pass, failures and a usage error.
    assert sorted({answer["status"] for answer in answers}) == [0, 1, 2]


@pytest.mark.parametrize("request_line", [
    "not json\n",
    "[]\n",
    json.dumps({"definition": "config_value"}) + "\n",
    json.dumps({"definition": 5, "text": "{}"}) + "\n",
    json.dumps({"definition": "config_value", "text": "{}", "lines": "yes"}) + "\n",
])
def test_a_request_it_cannot_read_is_answered_and_the_next_still_checked(request_line: str) -> None:
    good = json.dumps({"definition": "config_value", "text": json.dumps({"key": "actor", "source": "config", "value": "Dana"})}) + "\n"
    answers = serve([request_line, good])
    assert answers[0]["status"] == 2
    assert "a request is {definition, lines, text}" in answers[0]["stderr"]
    assert answers[1] == {"status": 0, "stdout": "ok: config_value\n", "stderr": ""}
