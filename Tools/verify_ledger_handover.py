"""verify-ledger --handover FILE: a handover file from `jqc handover`, checked
offline as Schemas/ledger-format.md § Handover files says, with the bundle
checks of `verify-ledger --bundle` (the module `base` passed in: the
verify-ledger script itself, whose functions stay as they are).

Alone it makes the strictness and checks 1-6 and 10's field rules; given what
a receiver holds (`--pin DEVICE=VKEY`, `--held FILE` for each handover file
the receiver took, `--key VKEY` as `jqc receive --key`, `--receiver DEVICE`)
it makes checks 7 (pinned keys), 8 (forks) and 9 (a copy is a copy) too.
Exit status 0 (OK), 1 (UNREADABLE, NOT VERIFIED or NOT RECEIVED: what
`jqc receive` would refuse), 2 (usage).
"""
import argparse
import hashlib
import json
import os
import stat
import sys
from pathlib import Path

FORMATS = ["jqc-handover/1", "jqc-handover/2", "jqc-handover/3"]
MAXIMUM_FILE_SIZE = 1 << 30  # Reception.maximumFileSize
MAXIMUM_DEPTH = 256  # ReceptionWalk.maximumDepth
MAXIMUM_RECORDS = 1_000_000  # ReceptionWalk.maximumRecords
MAXIMUM_PHOTO = 50 << 20
EVENT_SCHEMAS = Path(__file__).resolve().parent.parent / "Schemas" / "events"


class Refused(Exception):
    """A refusal line: its class (UNREADABLE, NOT VERIFIED, NOT RECEIVED) and reason."""

    def __init__(self, kind, reason):
        super().__init__(reason)
        self.kind, self.reason = kind, reason


def unreadable(reason):
    return Refused("UNREADABLE", reason)


def refused(reason):
    return Refused("NOT VERIFIED", reason)


# -- Strictness ---------------------------------------------------------------

def lower_uuid(base, text, path):
    if not isinstance(text, str) or not base.is_lower_uuid(text):
        raise unreadable(f"{path} is not a lower-case UUID")
    return text


def hex_digest(text, path):
    if not (isinstance(text, str) and len(text) == 64 and all(c in "0123456789abcdef" for c in text)):
        raise unreadable(f"{path} is not a SHA-256 in lower-case hex")
    return bytes.fromhex(text)


def strict_b64(base, text, path):
    import base64
    try:
        raw = base.b64(text)
    except (ValueError, UnicodeEncodeError):
        raise unreadable(f"{path} is not standard base64 with padding")
    if base64.b64encode(raw).decode() != text:
        raise unreadable(f"{path} is not standard base64 with padding")
    return raw


def members(base, value, names, path, place=None):
    """`value` as an object with exactly `names`, named as the Swift reader names them."""
    if not isinstance(value, base.Members):
        raise unreadable(f"{path} must be an object" if path else "the file is not a JSON object")
    where = place or path
    seen = {}
    for name, _ in value:
        lower = base.ascii_lower(name)
        if lower in seen:
            if seen[lower] == name:
                raise unreadable(f'member "{base.shown(name)}" appears twice in {where}')
            raise unreadable(f'member "{base.shown(name)}" differs from "{base.shown(seen[lower])}" '
                             f"only in case in {where}")
        seen[lower] = name
    for name, _ in value:
        if name not in names:
            raise unreadable(f'unknown member "{base.shown(name)}" in {where}')
    present = dict(value)
    for name in names:
        if name not in present:
            raise unreadable(f'member "{name}" is missing from {where}')
    return present


def file_list(base, items, path):
    if not isinstance(items, list) or isinstance(items, base.Members):
        raise unreadable(f"{path} must be an array")
    out = []
    for i, item in enumerate(items):
        m = members(base, item, ["sha256", "data"], f"{path}[{i}]")
        for name in ("sha256", "data"):
            if not isinstance(m[name], str):
                raise unreadable(f"{path}[{i}].{name} must be a string")
        out.append((m["sha256"], hex_digest(m["sha256"], f"{path}[{i}].sha256"),
                    strict_b64(base, m["data"], f"{path}[{i}].data")))
    return out


def decode_handover(base, data):
    """The file decoded strictly (§ Handover files, strictness); Refused UNREADABLE names the first problem."""
    try:
        top = base.read_bundle_json(data)
    except base.Unreadable as error:
        raise unreadable(error.verdict.replace("the bundle nests", "the file nests"))
    version = 1
    if isinstance(top, base.Members):
        fmt = dict(top).get("format")
        if fmt is not None:
            if not isinstance(fmt, str):
                raise unreadable("format must be a string")
            if fmt not in FORMATS:
                raise unreadable(f'the file\'s format is "{base.shown(fmt)}", not {", ".join(FORMATS[:-1])} '
                                 f"or {FORMATS[-1]}")
            version = FORMATS.index(fmt) + 1
    names = ["format", "mode", "to", "from_device", "bundle", "template_record", "photo_files"]
    names += ["carried_records"] if version >= 2 else []
    names += ["to_device", "carried_photo_files"] if version >= 3 else []
    m = members(base, top, names, "", "the file")
    if m["mode"] not in ("handover", "share"):
        raise unreadable('mode is neither "handover" nor "share"')
    if m["to"] is not None and not isinstance(m["to"], str):
        raise unreadable("to must be a string")
    to_device = None
    if version >= 3 and m["to_device"] is not None:
        to_device = lower_uuid(base, m["to_device"], "to_device")
    from_device = lower_uuid(base, m["from_device"], "from_device")
    bundle_value = m["bundle"]
    if isinstance(bundle_value, base.Members):
        fmt = dict(bundle_value).get("format")
        if isinstance(fmt, str) and fmt != base.BUNDLE_FORMAT:
            raise unreadable(f'the bundle\'s format is "{base.shown(fmt)}", not {base.BUNDLE_FORMAT}')
    schema = {k: v for k, v in base.BUNDLE.items() if k != "consistency"}
    try:
        if not isinstance(bundle_value, base.Members):
            raise base.Unreadable("bundle must be an object")
        bundle = base.check_object(bundle_value, schema, "bundle")
        template_entry = base.check_value(m["template_record"], base.ENTRY, "template_record")
    except base.Unreadable as error:
        raise unreadable(error.verdict)
    lower_uuid(base, bundle["inspection"], "bundle.inspection")
    entries = [(bundle["key_record"], "bundle.key_record"), (template_entry, "template_record")]
    entries += [(e, f"bundle.records[{i}]") for i, e in enumerate(bundle["records"])]
    for entry, path in entries:
        strict_b64(base, entry["record"], f"{path}.record")
        for i, h in enumerate(entry["inclusion"]):
            if len(strict_b64(base, h, f"{path}.inclusion[{i}]")) != 32:
                raise unreadable(f"{path}.inclusion[{i}] is not a 32-byte hash")
    for i, photo in enumerate(bundle["photos"]):
        lower_uuid(base, photo["photo_id"], f"bundle.photos[{i}].photo_id")
        hex_digest(photo["sha256"], f"bundle.photos[{i}].sha256")
    photo_files = file_list(base, m["photo_files"], "photo_files")
    carried = carried_records(base, m["carried_records"] if version >= 2 else None, bundle["records"])
    carried_photos = file_list(base, m["carried_photo_files"] if version >= 3 else [], "carried_photo_files")
    previous = None
    for i, (text, digest, raw) in enumerate(carried_photos):
        if previous is not None and text <= previous:
            raise unreadable(f"carried_photo_files[{i}] repeats the photo file {text}" if text == previous else
                             f"carried_photo_files[{i}] is out of order (the entries are sorted by sha256)")
        previous = text
        if hashlib.sha256(raw).digest() != digest:
            raise unreadable(f"carried_photo_files[{i}].data does not hash to its sha256 {text}")
    return {"version": version, "mode": m["mode"], "to": m["to"], "to_device": to_device,
            "from_device": from_device, "bundle": bundle, "template_record": template_entry,
            "photo_files": photo_files, "carried": carried, "carried_photo_files": carried_photos}


def leaf_of(raw):
    return hashlib.sha256(b"\x00" + raw).digest()


def reception_payload(base, raw):
    """The payload of an inspection.received record, or None for another record."""
    try:
        record = base.decode_record(raw)
    except base.NotARecord:
        return None, None
    if record[5] != "inspection.received":
        return record, None
    return record, record[11]


def references(base, raw):
    """(leaves referenced, embedded record bytes) of a reception record (none for another record)."""
    record, payload = reception_payload(base, raw)
    if payload is None:
        return [], []
    leaves, embedded = [], []
    for item in payload.get("records") or []:
        if isinstance(item, dict) and isinstance(item.get("leaf"), bytes):
            leaves.append(item["leaf"])
        elif isinstance(item, dict) and isinstance(item.get("record"), bytes):
            embedded.append(item["record"])
    return leaves, embedded


def carried_records(base, items, records):
    """carried_records strictly: sorted, once each, hashing to their leaves, exactly the closure."""
    given = {}
    previous = None
    for i, item in enumerate(items or []):
        m = members(base, item, ["leaf", "record"], f"carried_records[{i}]")
        text = m["leaf"]
        if not isinstance(text, str):
            raise unreadable(f"carried_records[{i}].leaf must be a string")
        leaf = hex_digest(text, f"carried_records[{i}].leaf")
        if not isinstance(m["record"], str):
            raise unreadable(f"carried_records[{i}].record must be a string")
        if previous is not None and text <= previous:
            raise unreadable(f"carried_records[{i}] repeats leaf {text}" if text == previous else
                             f"carried_records[{i}] is out of order (the entries are sorted by leaf)")
        previous = text
        raw = strict_b64(base, m["record"], f"carried_records[{i}].record")
        if leaf_of(raw) != leaf:
            raise unreadable(f"carried_records[{i}].record does not hash to its leaf {text}")
        given[leaf] = raw
    pending = []
    for entry in records:
        try:
            raw = base.b64(entry["record"])
        except (ValueError, UnicodeEncodeError):
            continue
        pending += references(base, raw)[0]
    closure = {}
    while pending:
        leaf = pending.pop()
        if leaf in closure:
            continue
        if len(closure) >= MAXIMUM_RECORDS:
            raise unreadable(f"carried_records: its receptions reach more than {MAXIMUM_RECORDS} carried records")
        if leaf not in given:
            if items is None:
                raise unreadable("the file is of format jqc-handover/1, yet a reception it carries refers to "
                                 "records by leaf: only a jqc-handover/2 file carries them")
            raise unreadable(f"carried_records: the carried record with leaf {leaf.hex()} is missing")
        closure[leaf] = given[leaf]
        pending += references(base, given[leaf])[0]
    extra = sorted(k.hex() for k in given if k not in closure)
    if extra:
        raise unreadable(f"carried_records holds leaf {extra[0]}, which no carried reception references")
    return closure


# -- Checks 1-10 ----------------------------------------------------------------

def walk(base, file):
    """Every record the file carries, at any depth, breadth first, each leaf once:
    [(record map, bytes, depth)]; refuses a walk past ReceptionWalk's limits."""
    level = [base.b64(e["record"]) for e in file["bundle"]["records"]]
    depth, seen, found = 1, set(), []
    while level:
        if depth > MAXIMUM_DEPTH:
            raise refused(f"its receptions nest more than {MAXIMUM_DEPTH} deep (a reception inside the records of "
                          f"another, {MAXIMUM_DEPTH} times over), past the limit of what a ledger takes")
        following = []
        for raw in level:
            leaf = leaf_of(raw)
            if leaf in seen:
                continue
            seen.add(leaf)
            if len(seen) > MAXIMUM_RECORDS:
                raise refused(f"its receptions reach more than {MAXIMUM_RECORDS} carried records")
            try:
                record = base.decode_record(raw)
            except base.NotARecord as error:
                raise refused(f"the carried record with leaf {leaf.hex()} cannot be read: {error}")
            found.append((record, raw, depth))
            leaves, embedded = references(base, raw)
            following += [file["carried"][k] for k in leaves if k in file["carried"]] + embedded
        level, depth = following, depth + 1
    return found


def check_bundle(base, file, receiver):
    """Checks 1-6: the bundle as `verify-ledger --bundle` checks it, then what a handover adds."""
    bundle = file["bundle"]
    try:
        base.verify_bundle(bundle)
    except base.NotVerified as error:
        text = str(error)
        for member in ("records[", "key_record", "photos[", "public_key"):
            if text.startswith(member):
                text = "bundle." + text
        raise refused(text)
    key = base.VerifierKey(bundle["public_key"])
    if key.name != f"jqc/{file['from_device']}":
        raise refused(f"the key {base.shown(key.name)} is not the key of from_device {file['from_device']}")
    records = []
    for i, entry in enumerate(bundle["records"]):
        raw = base.b64(entry["record"])
        record = base.decode_record(raw)
        if base.uuid_text(record[9]) != file["from_device"]:
            raise refused(f"bundle.records[{i}] was recorded by device {base.uuid_text(record[9])}, not from_device")
        if base.cbor2.dumps(record, canonical=True) != raw:
            raise refused(f"bundle.records[{i}].record is not in deterministic CBOR")
        records.append(record)
    # 2. The photo files.
    photos = bundle["photos"]
    if len(file["photo_files"]) != len(photos):
        raise refused(f"photo_files has {len(file['photo_files'])} files for {len(photos)} photos")
    for i, (photo, (text, digest, raw)) in enumerate(zip(photos, file["photo_files"])):
        if text != photo["sha256"] or hashlib.sha256(raw).digest() != digest:
            raise refused(f"photo_files[{i}] is not the file of photo {photo['photo_id']} (its SHA-256 differs)")
    carried = walk(base, file)
    if file["version"] >= 3:
        named = {}
        for record, _, depth in carried:
            if depth > 1 and record[5] == "photo.captured" and isinstance(record[11].get("sha256"), str):
                named.setdefault(record[11]["sha256"], record[11].get("photo_id"))
        for photo in photos:
            named.pop(photo["sha256"], None)
        given = set()
        for i, (text, _, _) in enumerate(file["carried_photo_files"]):
            if text not in named:
                raise refused(f"carried_photo_files[{i}] ({text}) is the file of no photo a carried record names, "
                              "or one photo_files holds already")
            given.add(text)
        missing = sorted(h for h in named if h not in given)
        if missing:
            raise refused(f"carried_photo_files lacks the file of photo {named[missing[0]]} ({missing[0]}), "
                          "which a carried record names")
    # 3. The handover itself.
    last = records[-1]
    if last[5] != "inspection.handed_over":
        raise refused("the last record is not the sender's inspection.handed_over")
    handed = last[11]
    if handed.get("mode") != file["mode"] or handed.get("to") != file["to"]:
        raise refused("mode or to differs from the sender's inspection.handed_over record")
    if handed.get("to_device") != file["to_device"]:
        raise refused(f"to_device ({file['to_device'] or 'null'}) differs from the sender's "
                      f"inspection.handed_over record ({handed.get('to_device') or 'null'})")
    # 4. The template.
    size, root = base.open_checkpoint(bundle["checkpoint"], key, "the checkpoint")
    entry = file["template_record"]
    raw = base.b64(entry["record"])
    proof = [base.b64(h) for h in entry["inclusion"]]
    if not 1 <= entry["position"] <= size or not base.verify_inclusion(leaf_of(raw), entry["position"] - 1,
                                                                       size, proof, root):
        raise refused(f"template_record (record {entry['position']}) is not in the signed tree at that position")
    try:
        pinned = base.decode_record(raw)
    except base.NotARecord:
        raise refused("template_record.record is not a ledger record (Schemas/ledger-format.md § A record)")
    payload = pinned[11]
    if (pinned[5] != "template.pinned" or base.uuid_text(pinned[9]) != file["from_device"]
            or not isinstance(payload.get("template"), dict)):
        raise refused("template_record is not one of from_device's template.pinned records")
    template = payload["template"]
    if hashlib.sha256(base.cbor2.dumps(template, canonical=True)).hexdigest() != payload.get("template_hash"):
        raise refused("template_record's template does not hash to the hash it is pinned under")
    starts = [r for r in records if r[5] == "inspection.started"]
    if not starts:
        starts = [r for r, _, _ in carried if r[5] == "inspection.started"][:1]
    if not starts:
        raise refused("the records hold no inspection.started")
    started = starts[-1][11].get("template_hash")
    if started != payload.get("template_hash"):
        raise refused(f"template_record pins template {payload.get('template_hash')}, the inspection started "
                      f"with {started}")
    # 5. Every record reads as an event of its type.
    for record in records:
        problem = payload_problem(record)
        if problem:
            raise refused(f"the {record[5]} record at {record[1]} cannot be read: {problem}")
    # 6. Not the receiver's own id.
    if receiver is not None and receiver == file["from_device"]:
        raise Refused("NOT RECEIVED", f"this handover file of inspection {bundle['inspection']} names the receiver's own device "
                      "id as its sender: it was written by that ledger, or by another sharing its device id")
    return key, size, root, template, carried


def payload_schema(kind, version):
    """The JSON Schema of a payload of type `kind`, schema version `version`
    (Schemas/events: `<type>.schema.json` when its x-schema-version is that
    version, else `<type>.v<N>.schema.json`), or None when jqc reads none."""
    for name in (f"{kind}.schema.json", f"{kind}.v{version}.schema.json"):
        path = EVENT_SCHEMAS / name
        if "/" in kind or not path.is_file():
            continue
        schema = json.loads(path.read_text(encoding="utf-8"))
        if name.endswith(f".v{version}.schema.json") or schema.get("x-schema-version") == version:
            return schema
    return None


def payload_problem(record):
    """Check 5: why the record's payload does not read as an event of its
    type and version (as jqc's decoders read it: every key the schema
    requires present, keys it does not know skipped), or None."""
    schema = payload_schema(record[5], record[6])
    if schema is None:
        return f"no event type {record[5]} of schema version {record[6]} is known"
    payload = record[11]
    if not isinstance(payload, dict) or not all(isinstance(k, str) for k in payload):
        return "the payload is not a map with text keys"
    missing = [k for k in schema.get("required", []) if k not in payload]
    if missing:
        return f'the key "{missing[0]}" is missing'
    return None


def rule_break(base, record, template):
    """Check 10: the rule of the pinned template a carried record breaks, or None."""
    kind, payload = record[5], record[11]
    if kind not in ("inspection.field_set", "inspection.field_cleared", "photo.captured"):
        return None
    field_id = payload.get("field_id")
    if field_id is None:
        return None
    fields = {f.get("id"): f for f in template.get("fields", []) if isinstance(f, dict)}
    field = fields.get(field_id)
    if field is None:
        return f"field {field_id} is not in template {template.get('id')}"
    ftype = field.get("type")
    if kind == "inspection.field_cleared":
        return f"field {field_id} is a {ftype} field, which holds no value" if ftype in ("section", "label") else None
    if kind == "photo.captured":
        return None if ftype in ("image", "signature") else f"field {field_id} ({ftype}) holds no photos"
    if payload.get("field_type") != ftype:
        return f"it records a {payload.get('field_type')} answer for a {ftype} field"
    value, options = payload.get("value"), [o.lower() for o in field.get("options") or []]
    if ftype in ("section", "label"):
        return "a display-only field holds no value"
    if ftype == "rating" and not (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 5):
        return f'refuses "{value}": a rating is a whole number from 0 to 5'
    if ftype in ("radio", "select") and (not isinstance(value, str) or value.strip().lower() not in options):
        return f'refuses "{value}": it is not offered'
    if ftype == "checkbox_group":
        chosen = [v.strip().lower() for v in value] if isinstance(value, list) else None
        if chosen is None or any(c not in options for c in chosen) or len(set(chosen)) != len(chosen):
            return "refuses the options: not each offered once"
    if ftype == "email":
        text = value.strip() if isinstance(value, str) else ""
        parts = text.split("@")
        if (len(parts) != 2 or not parts[0] or any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in text)
                or len(parts[1].split(".")) < 2 or not all(parts[1].split("."))):
            return "refuses the address: not a plausible email address"
    if ftype == "table" and isinstance(value, list):
        width = len(field.get("columns") or [])
        if any(not isinstance(row, list) or len(row) != width for row in value):
            return f"a row does not have the table's {width} columns"
    return None


def is_image(raw):
    return (raw[:3] == b"\xff\xd8\xff" or raw[:8] == b"\x89PNG\r\n\x1a\n" or raw[:4] == b"GIF8"
            or (raw[:4] == b"RIFF" and raw[8:12] == b"WEBP")
            or (raw[4:8] == b"ftyp" and raw[8:12] in (b"heic", b"heix", b"mif1", b"heif")))


def endorses(base, endorsement, key, old):
    """Check 7: `endorsement` is jqc key rotate's text for `key`, signed by the pinned key `old`."""
    text = f"jqc key rotation\n{key.name}\n{key.text}\n"
    if not isinstance(endorsement, str) or key.name != old.name or not endorsement.startswith(text + "\n"):
        return False
    try:
        return base.open_note(endorsement, old, "the endorsement") == text
    except base.NotVerified:
        return False


def checkpoint_of(base, file):
    """(size, root, {position: leaf}) of a decoded, verified file's checkpoint."""
    bundle = file["bundle"]
    key = base.VerifierKey(bundle["public_key"])
    size, root = base.open_checkpoint(bundle["checkpoint"], key, "the checkpoint")
    entries = bundle["records"] + [bundle["key_record"], file["template_record"]]
    return size, root, {e["position"]: leaf_of(base.b64(e["record"])) for e in entries}


def check_trust(base, file, key, pins, given, held):
    """Checks 7-9 against what the receiver holds: its pins, the files it took."""
    device = file["from_device"]
    key.text = file["bundle"]["public_key"]
    if given is not None:
        if given != key.text:
            raise refused(f"the file of device {device} is signed by key {key.key_id:08x}, not by the key given "
                          f"with --key ({given.split('+')[1] if given.count('+') >= 2 else given})")
    else:
        pinned = pins.get(device, []) + [h["bundle"]["public_key"] for h in held if h["from_device"] == device]
        if pinned and key.text not in pinned:
            endorsement = base.decode_record(base.b64(file["bundle"]["key_record"]["record"]))[11].get("endorsement")
            olds = []
            for text in pinned:
                try:
                    olds.append(base.VerifierKey(text))
                except ValueError:
                    pass
            if not any(endorses(base, endorsement, key, old) for old in olds):
                ids = ", ".join(sorted({p.split("+")[1] for p in pinned if p.count("+") >= 2}))
                raise refused(f"the file names device {device} as its sender, but it is signed by key "
                              f"{key.key_id:08x}, and this ledger pinned key {ids} for that device")
    size, root, leaves = checkpoint_of(base, file)
    for earlier in held:
        if earlier["from_device"] != device:
            continue
        their_size, their_root, their_leaves = checkpoint_of(base, earlier)
        why = None
        if their_size == size and their_root != root:
            why = "one size with two roots"
        elif their_size != size:
            for position in sorted(their_leaves):
                if position in leaves and leaves[position] != their_leaves[position]:
                    why = f"the record at position {position} of its log is proven in each with a different leaf"
                    break
        if why:
            raise refused(f"device {device} has two histories: a held checkpoint of {their_size} records and this "
                          f"file's of {size} records: {why}")
    # 9. A copy is a copy: against the held files of the same inspection (and what they carry).
    inspection = file["bundle"]["inspection"]
    same = [h for h in held if h["bundle"]["inspection"] == inspection]
    if not same:
        return
    held_bytes, held_start = {}, None
    for earlier in same:
        for record, raw, _ in earlier["walked"]:
            held_bytes.setdefault(record[2], raw)
            if record[5] == "inspection.started" and held_start is None:
                held_start = (record[2], raw)
    theirs = file["walked"]
    if held_start is not None:
        for record, raw, _ in theirs:
            if record[5] == "inspection.started" and raw != held_start[1]:
                raise refused(f"the file's inspection {inspection} starts with the record "
                              f"{base.uuid_text(record[2])}, which is not the inspection.started record "
                              f"{base.uuid_text(held_start[0])} this device holds for that inspection")
    for record, raw, _ in theirs:
        if held_bytes.setdefault(record[2], raw) != raw:
            raise refused(f"the file of inspection {inspection} carries a record with id "
                          f"{base.uuid_text(record[2])} whose bytes differ from the record of that id this "
                          "device holds")


def read_file(path):
    """The file's bytes, judged by kind and size first (a FIFO would block, a device never end)."""
    try:
        status = os.stat(path)
    except OSError as error:
        raise unreadable(f"{path} cannot be read ({error.strerror.lower()})")
    if not stat.S_ISREG(status.st_mode):
        kind = ("a directory" if stat.S_ISDIR(status.st_mode) else "a FIFO (a named pipe)"
                if stat.S_ISFIFO(status.st_mode) else "a device or another special file")
        raise unreadable(f"{path} is {kind}, not a handover file")
    if status.st_size > MAXIMUM_FILE_SIZE:
        raise unreadable(f"{path} is larger than the {MAXIMUM_FILE_SIZE >> 20} MiB a handover file may be")
    with open(path, "rb") as f:
        data = f.read(MAXIMUM_FILE_SIZE + 1)
    if len(data) > MAXIMUM_FILE_SIZE:
        raise unreadable(f"{path} is larger than the {MAXIMUM_FILE_SIZE >> 20} MiB a handover file may be")
    return data


def verify(base, path, pins, given, held_paths, receiver):
    """The verdict line for the file at `path`; Refused names the first check that fails."""
    held = []
    for held_path in held_paths:
        earlier = decode_handover(base, read_file(held_path))
        earlier["walked"] = walk(base, earlier)
        held.append(earlier)
    file = decode_handover(base, read_file(path))
    key, size, _, template, carried = check_bundle(base, file, receiver)
    file["walked"] = carried
    check_trust(base, file, key, pins, given, held)
    for record, _, _ in carried:
        rule = rule_break(base, record, template)
        if rule:
            raise Refused("NOT RECEIVED", f"the handover file of inspection {file['bundle']['inspection']} carries "
                          f"record {base.uuid_text(record[2])} of device {base.uuid_text(record[9])} (its log's "
                          f"position {record[1]}) breaks the template's rules: {rule}")
    for name, files in (("photo_files", file["photo_files"]), ("carried_photo_files", file["carried_photo_files"])):
        for i, (text, _, raw) in enumerate(files):
            if not raw or len(raw) > MAXIMUM_PHOTO or not is_image(raw):
                raise refused(f"{name}[{i}] (file {text}) is empty, larger than 50 MiB or not a JPEG, PNG, GIF, "
                              "WebP or HEIC image")
    pinning = ("given with --key" if given else "pinned" if any(
        key.text in pins.get(file["from_device"], []) + [h["bundle"]["public_key"] for h in held]
        for _ in [0]) else "not pinned: first seen, trust on first use")
    return (f"OK: handover file of inspection {file['bundle']['inspection']} from device {file['from_device']} "
            f"({base.plural(len(file['bundle']['records']), 'record')}, "
            f"{base.plural(len(carried) - len(file['bundle']['records']), 'carried record')}), in the tree of "
            f"{base.plural(size, 'record')} signed by {base.shown(key.name)} (key id {key.key_id:08x}, {pinning})")


def main(base, argv):
    """verify-ledger --handover FILE [--pin DEVICE=VKEY]... [--held FILE]... [--key VKEY] [--receiver DEVICE]."""
    parser = argparse.ArgumentParser(prog="verify-ledger --handover",
                                     description="check a handover file as jqc receive would")
    parser.add_argument("--handover", required=True, metavar="FILE")
    parser.add_argument("--pin", action="append", default=[], metavar="DEVICE=VKEY",
                        help="a key the receiver pinned for a device (repeatable)")
    parser.add_argument("--held", action="append", default=[], metavar="FILE",
                        help="a handover file the receiver took earlier: its key pinned, its checkpoint and "
                             "records held (repeatable)")
    parser.add_argument("--key", metavar="VKEY", help="the sender's key as the person holds it (jqc receive --key)")
    parser.add_argument("--receiver", metavar="DEVICE", help="the receiver's own device id (check 6)")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(errors="backslashreplace")
    pins = {}
    for pin in args.pin:
        device, _, vkey = pin.partition("=")
        pins.setdefault(device.lower(), []).append(vkey)
    try:
        print(verify(base, args.handover, pins, args.key, args.held,
                     args.receiver.lower() if args.receiver else None))
    except Refused as error:
        print(f"{error.kind}: {error.reason}")
        sys.exit(1)
    except base.NotVerified as error:
        print(f"NOT VERIFIED: {error}")
        sys.exit(1)
    sys.exit(0)
