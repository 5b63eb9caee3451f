"""A bounded fuzz of the Python bundle decoder and verifier
(Tools/verify-ledger --bundle): mutated proof bundles, from the kept seeds of
Tests/Fuzz/corpus/bundle/, must each be verified, refused as unreadable
(`Unreadable`) or refused as not verified (`NotVerified`); any other
exception (a traceback) fails the test, naming the input it left behind.

JQC_BUNDLE_FUZZ_SECONDS bounds the run (default 10; Tools/test sets it) and
JQC_BUNDLE_FUZZ_SEED picks the mutations (default: a fixed seed, so a run can
be repeated; the seed is in the failure message). Tools/verify-bundle-go/fuzz
does the same for the Go verifier with Go's native fuzzing.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import random
import time
import traceback
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "Tests" / "Fuzz" / "corpus" / "bundle"


def load_verifier() -> Any:
    loader = importlib.machinery.SourceFileLoader("verify_ledger", str(REPO / "Tools" / "verify-ledger"))
    spec = importlib.util.spec_from_loader("verify_ledger", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


VERIFIER = load_verifier()

# Values a mutation puts where a value was: every JSON type, the edges of the
# integer range, text that is not what it claims.
ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1, 10**30, 1.5, -0.0, 1e308,
    "", "A", "\u202e", "\ud800", "=" * 3, "AAAA", "////" * 11, "jqc-proof-bundle/1", "\u2014 x AAAA\n",
    [], [[]], {}, {"a": 1}, ["AAAA"] * 3,
]


def walk(value: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a value inside a decoded JSON document."""
    paths = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            paths += walk(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            paths += walk(item, path + (index,))
    return paths


def replace_at(document: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy = dict(document) if isinstance(document, dict) else list(document)
    copy[head] = replace_at(copy[head], rest, new)
    return copy


def structural(rng: random.Random, seed: bytes) -> bytes:
    """A JSON-level mutation: a value replaced, a member dropped, renamed,
    duplicated or case-varied, a list grown or emptied, text edited."""
    document = json.loads(seed)
    path = rng.choice(walk(document))
    target: Any = document
    for step in path:
        target = target[step]
    choice = rng.randrange(7)
    if choice == 0:
        return json.dumps(replace_at(document, path, rng.choice(ODD_VALUES))).encode()
    if choice == 1 and isinstance(target, str) and target:
        i = rng.randrange(len(target))
        edited = target[:i] + rng.choice(["", "A", "+", "\n", "=", "0", "\u00e9", target[i:]]) + target[i + 1:]
        return json.dumps(replace_at(document, path, edited)).encode()
    if choice == 2 and isinstance(target, int) and not isinstance(target, bool):
        return json.dumps(replace_at(document, path, target + rng.choice([-2, -1, 1, 2, 2**32, -target]))).encode()
    if choice == 3 and isinstance(target, list) and target:
        grown = target + [rng.choice(target)] if rng.random() < 0.5 else target[: rng.randrange(len(target))]
        return json.dumps(replace_at(document, path, grown)).encode()
    if choice == 4 and isinstance(target, dict) and target:
        key = rng.choice(list(target))
        members = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in target.items())
        variant = rng.choice([key, key.upper(), key + "x", "ſ" + key[1:] if key else "x"])
        body = "{" + members + f", {json.dumps(variant)}: {json.dumps(target[key])}" + "}"
        marker = "\u0000MARK\u0000"
        text = json.dumps(replace_at(document, path, marker))
        return text.replace(json.dumps(marker), body).encode()
    if choice == 5 and isinstance(target, dict) and target:
        key = rng.choice(list(target))
        smaller = {k: v for k, v in target.items() if k != key}
        return json.dumps(replace_at(document, path, smaller)).encode()
    # Deep nesting around a value.
    depth = rng.choice([2, 63, 64, 65, 500])
    marker = "\u0000MARK\u0000"
    text = json.dumps(replace_at(document, path, marker))
    return text.replace(json.dumps(marker), "[" * depth + "1" + "]" * depth).encode()


def bytewise(rng: random.Random, seed: bytes) -> bytes:
    """A byte-level mutation: bytes flipped, dropped, inserted or repeated."""
    data = bytearray(seed)
    for _ in range(rng.randint(1, 4)):
        if not data:
            break
        i = rng.randrange(len(data))
        choice = rng.randrange(5)
        if choice == 0:
            data[i] ^= 1 << rng.randrange(8)
        elif choice == 1:
            del data[i : i + rng.randint(1, 16)]
        elif choice == 2:
            data[i:i] = bytes([rng.choice(b'{}[]",:0123456789-eE.\\u\xff\xc3')])
        elif choice == 3:
            j = rng.randrange(len(data))
            data[i:i] = data[j : j + rng.randint(1, 64)]
        else:
            data[i] = rng.choice(b"0123456789")
    return bytes(data)


def check_one(data: bytes, trusted: str) -> None:
    """Decodes and verifies `data` both without and with the trusted
    checkpoint; the two refusals are the only exceptions allowed."""
    try:
        bundle = VERIFIER.decode_bundle(data)
    except VERIFIER.Unreadable as refusal:
        assert refusal.verdict, "an unreadable bundle without a reason"
        return
    for with_trusted in (None, trusted):
        try:
            verdict = VERIFIER.verify_bundle(bundle, None, with_trusted)
        except VERIFIER.NotVerified as refusal:
            assert str(refusal), "a bundle not verified without a reason"
            continue
        assert verdict.startswith("verified: "), verdict


def fuzz(seconds: float, seed: int, tmp: Path) -> int:
    seeds = [path.read_bytes() for path in sorted(SEEDS.glob("*.json"))]
    trusted = (SEEDS / "trusted.checkpoint").read_text()
    rng = random.Random(seed)
    mutators: list[Callable[[random.Random, bytes], bytes]] = [structural, bytewise]
    deadline = time.monotonic() + seconds
    runs = 0
    while time.monotonic() < deadline:
        data = rng.choice(mutators)(rng, rng.choice(seeds))
        # A mutated input mutated again reaches further from the seeds.
        if rng.random() < 0.3:
            try:
                data = structural(rng, data)
            except (ValueError, UnicodeDecodeError, RecursionError):
                data = bytewise(rng, data)
        try:
            check_one(data, trusted)
        except Exception:  # anything but the verifier's own refusals
            kept = tmp / f"crash-{runs}.json"
            kept.write_bytes(data)
            raise AssertionError(
                f"the Python bundle verifier raised on input {runs} of seed {seed} (kept in {kept}; add it to "
                f"Tests/Fuzz/corpus/bundle/ as crash-<what>.json once fixed):\n{traceback.format_exc()}"
            )
        runs += 1
    return runs


def test_the_seeds_verify() -> None:
    trusted = (SEEDS / "trusted.checkpoint").read_text()
    for name in ("seed-bundle.json", "seed-consistent.json"):
        bundle = VERIFIER.decode_bundle((SEEDS / name).read_bytes())
        assert VERIFIER.verify_bundle(bundle, None, None).startswith("verified: ")
    consistent = VERIFIER.decode_bundle((SEEDS / "seed-consistent.json").read_bytes())
    assert "extending the trusted checkpoint" in VERIFIER.verify_bundle(consistent, None, trusted)


def test_kept_crash_inputs_are_refused() -> None:
    trusted = (SEEDS / "trusted.checkpoint").read_text()
    for path in sorted(SEEDS.glob("crash-*")):
        check_one(path.read_bytes(), trusted)


def test_mutated_bundles_are_verified_or_refused_never_a_traceback(tmp_path: Path) -> None:
    seconds = float(os.environ.get("JQC_BUNDLE_FUZZ_SECONDS", "10"))
    seed = int(os.environ.get("JQC_BUNDLE_FUZZ_SEED", "20261202"))
    runs = fuzz(seconds, seed, tmp_path)
    # Each input takes milliseconds: a run that managed only a few hung on one.
    assert runs > 0 or seconds <= 0
