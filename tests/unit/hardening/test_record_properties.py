"""Property-based tests of the records the rollout engine reads back from a master: the record of a held change
(<state_dir>/held-change.json) and each backup's index (<state_dir>/<instance>/backup/index.json).

Hypothesis gives them any bytes (cut short, random, JSON of any shape), and records the engine wrote with one field
changed to any JSON value or removed, with and without a checksum that matches. Properties:

- loading gives a record the engine can use, or no record (no file), or RecordDamaged naming the file: never another
  exception, at load or afterwards when the engine uses what it loaded (its names, its instances as they listened
  before, the restore's rule);
- what the engine writes reads back as it was written (every valid record round-trips);
- a restore from whatever index loaded writes nothing that its rule refuses.

`make fuzz` runs FUZZ_SCALE times as many examples, with a new seed each run.
"""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ansible_collections.kubesched.schedulers.plugins.module_utils import _records
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import Backup
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.held_change import FILE_NAME, HeldChange, as_before
from ansible_collections.kubesched.schedulers.plugins.module_utils._records import RecordDamaged

FUZZ_SCALE = int(os.environ.get("FUZZ_SCALE") or 1)
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                      HealthCheck.function_scoped_fixture],
                derandomize=FUZZ_SCALE == 1, database=None, print_blob=True)


def examples(count):
    return count * FUZZ_SCALE


json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=False),
                        st.text(max_size=8), st.sampled_from(["", "/", "..", "../../etc", "a\x00b",
                                                              "/nonexistent/etc/hosts",
                                                              "0" * 64, "present", "absent", "/nonexistent/hosts"]))
json_value = st.recursive(json_scalar, lambda children: st.one_of(
    st.lists(children, max_size=3), st.dictionaries(st.text(max_size=8), children, max_size=3)), max_leaves=8)
# Absolute paths; none of them exists here (a restore test must never touch the machine's own files).
paths = st.one_of(st.sampled_from(["/nonexistent/kubernetes/batch.yaml", "/nonexistent/system/batch.service",
                                   "/nonexistent/hosts"]),
                  st.text(max_size=12).map(lambda text: "/nonexistent/" + text.replace("\x00", "")))
names = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
digests = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)


@st.composite
def record_bodies(draw):
    """A record body as the engine writes it (version 1's fields)."""
    instances = []
    for name in draw(st.lists(names, max_size=3, unique=True)):
        entry = {"name": name, "state": draw(st.sampled_from(["present", "absent"])),
                 "unit": draw(st.one_of(st.none(), names.map(lambda n: n + ".service"))),
                 "port": draw(st.integers(1, 65535)), "health_url": draw(st.one_of(st.none(), st.text(max_size=20).map(
                     lambda text: "https://127.0.0.1:10259/livez" + text.replace("\x00", "")))),
                 "pid_before": draw(st.one_of(st.none(), st.integers(0, 2 ** 31))),
                 "dirs": draw(st.one_of(st.none(), st.lists(paths, max_size=2)))}
        if draw(st.booleans()):
            entry["port_before"] = draw(st.integers(1, 65535))
        instances.append(entry)
    link_path = draw(st.one_of(st.none(), paths))
    return {"instances": instances, "link_path": link_path,
            "link_before": draw(st.one_of(st.none(), st.text(max_size=10).map(lambda t: t.replace("\x00", ""))))
            if link_path else None,
            "made": draw(st.lists(paths, max_size=2)),
            "changed_dirs": draw(st.lists(st.tuples(paths, st.integers(0, 2 ** 32 - 1), st.integers(0, 2 ** 32 - 1),
                                                    st.integers(0, 0o7777)).map(list), max_size=2)),
            "gate_passed": draw(st.booleans()), "standbys": draw(st.lists(names, max_size=2)),
            "written": draw(st.dictionaries(paths, digests, max_size=3))}


@st.composite
def mutated(draw, bodies):
    """A body with one place in it (any depth) replaced by any JSON value, or removed."""
    body = json.loads(json.dumps(draw(bodies)))
    node = body
    while True:
        keys = list(node.keys()) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            return body
        key = draw(st.sampled_from(keys))
        if isinstance(node[key], (dict, list)) and draw(st.booleans()):
            node = node[key]
            continue
        if isinstance(node, dict) and draw(st.booleans()):
            del node[key]
        else:
            node[key] = draw(json_value)
        return body


@st.composite
def as_file(draw, bodies):
    """The bytes of a body as version 1 (checksum right or wrong), as version 0 (no version), or cut short."""
    body = draw(bodies)
    form = draw(st.sampled_from(["v1", "v0", "wrong-sum", "cut"]))
    if form == "v0" or not isinstance(body, dict):
        data = json.dumps(body).encode()
    else:
        data = _records.encode(body)
        if form == "wrong-sum":
            data = data.replace(b'"sha256": "', b'"sha256": "0', 1)
    if form == "cut":
        data = data[:draw(st.integers(0, len(data)))]
    return data


record_files = st.one_of(
    st.binary(max_size=300),
    st.builds(lambda value: json.dumps(value).encode(), json_value),
    as_file(mutated(record_bodies())),
    as_file(record_bodies()),
)


def use(held):
    """What the engine does with a loaded record, before and during a restore."""
    held.names()
    for instance, _backup, _pid in held.touched:
        as_before(instance)
        refusal = held.refusal(instance)
        refusal("/etc/hosts")
        for path in held.written:
            refusal(path)


@settings(max_examples=examples(400), **SETTINGS)
@given(data=record_files)
def test_a_record_of_any_bytes_loads_checked_or_is_refused_naming_it(tmp_path_factory, data):
    state = tmp_path_factory.mktemp("state")
    (state / FILE_NAME).write_bytes(data)
    try:
        held = HeldChange.load(str(state))
    except RecordDamaged as exc:
        assert str(exc).startswith("%s cannot be trusted: " % (state / FILE_NAME))
        event("refused: " + exc.problem.split(" (")[0].split(":")[0][:40])
        return
    event("loaded")
    assert held is not None
    use(held)


@settings(max_examples=examples(200), **SETTINGS)
@given(body=record_bodies())
def test_a_record_the_engine_writes_reads_back_as_written(tmp_path_factory, body):
    state = tmp_path_factory.mktemp("state")
    (state / FILE_NAME).write_bytes(_records.encode(body))
    held = HeldChange.load(str(state))
    assert held.gate_passed is body["gate_passed"] and held.written == body["written"]
    assert held.made == body["made"] and held.changed_dirs == [tuple(entry) for entry in body["changed_dirs"]]
    assert (held.link_path, held.link_before) == (body["link_path"], body["link_before"])
    assert held.standbys == body["standbys"]
    use(held)


@st.composite
def index_bodies(draw, directory, victim):
    entries = []
    for index, path in enumerate(draw(st.lists(st.one_of(paths, st.just(victim)), max_size=3))):
        existed = draw(st.booleans())
        entries.append({"path": path, "existed": existed, "copy": "%s/%d" % (directory, index) if existed else None,
                        "sha256": draw(digests) if existed else None})
    return {"entries": entries}


@settings(max_examples=examples(400), **SETTINGS)
@given(data=st.data())
def test_a_backup_index_of_any_bytes_loads_checked_or_is_refused_and_a_restore_writes_nothing_refused(
        tmp_path_factory, data):
    state = tmp_path_factory.mktemp("state")
    directory = state / "one" / "backup"
    directory.mkdir(parents=True)
    victim = state / "victim"  # a file the index may name, which the restore must leave as it is
    victim.write_bytes(b"mine\n")
    bodies = index_bodies(str(directory), str(victim))
    body = data.draw(st.one_of(bodies, mutated(bodies)))
    raw = data.draw(st.one_of(st.just(None), st.just(None), st.just(None), st.binary(max_size=200)))
    (directory / "index.json").write_bytes(raw if raw is not None else data.draw(as_file(st.just(body))))
    for name in ("0", "1", "2"):
        (directory / name).write_bytes(b"copy\n")
    try:
        backup = Backup.load(str(state), "one")
    except RecordDamaged as exc:
        assert str(exc).startswith("%s cannot be trusted: " % (directory / "index.json"))
        event("refused: " + exc.problem.split(" (")[0].split(":")[0][:40])
        return
    event("loaded")
    backup.ran_before()
    # Every path refused: nothing may be written or removed, whatever the index names.
    problems = backup.restore(lambda path: "refused")
    assert all(isinstance(problem, str) for problem in problems)
    assert victim.read_bytes() == b"mine\n"
