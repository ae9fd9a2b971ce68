# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout engine's file layer: the file specs the controller rendered, against the host.

Read a file, tell what differs (content or attributes), show a diff (secrets masked), write a spec through the
collection's one atomic writer (module_utils/_files.py) with its parents made first, set attributes, check every
spec before the first write (all or nothing), say which instance owns a file instances share, and read the secure
port a unit or manifest gives kube-scheduler. Nothing here restarts or gates anything (engine.py does).
Host code: stdlib only.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import stat

from ansible_collections.kubesched.schedulers.plugins.module_utils import _files
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import sha256, sha256_file
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import RolloutFailed
from ansible_collections.kubesched.schedulers.plugins.module_utils._secrets import redact_text

MAX_READ = 1024 * 1024
# The engine sets modes with chmod: octal only (the roles render "0644"); a symbolic mode would need the current mode.
_OCTAL_MODE = re.compile(r"0?[0-7]{3}|[0-7]{4}")


def account_ids(owner, group):
    """(uid, gid), None for a name that does not exist (yet: check mode before the account is created)."""
    try:
        uid = pwd.getpwnam(owner).pw_uid
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        return None
    return uid, gid


def read_file(path):
    """{exists, content, sha256} of a small text file (content null when too big or not UTF-8)."""
    if not os.path.isfile(path):
        return {"exists": os.path.lexists(path), "content": None, "sha256": None}
    with open(path, "rb") as handle:
        data = handle.read(MAX_READ + 1)
    content = None
    if len(data) <= MAX_READ:
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError:
            content = None
    return {"exists": True, "content": content, "sha256": sha256_file(path)}


def file_changes(spec):
    """What differs between a wanted file and the host: 'content', 'attributes' or None."""
    path = spec["path"]
    if os.path.islink(path) or not os.path.isfile(path):
        return "content"
    if sha256_file(path) != sha256(spec["content"]):
        return "content"
    st = os.stat(path)
    ids = account_ids(spec["owner"], spec["group"])
    if ids is None or (st.st_uid, st.st_gid) != ids or stat.S_IMODE(st.st_mode) != int(spec["mode"], 8):
        return "attributes"
    return None


def _shown(spec, text):
    if text is None:
        return ""
    if spec.get("secret"):
        return "<secret: %d bytes, sha256 %s>\n" % (len(text.encode("utf-8")), sha256(text))
    # A file that is not secret may still replace one that was (a kubeconfig at the config's path): every secret
    # field is masked by the collection's one rule.
    return redact_text(text)


def file_diff(spec):
    before = read_file(spec["path"])
    before_text = before["content"] if before["exists"] else None
    attrs = ""
    if os.path.isfile(spec["path"]):
        st = os.stat(spec["path"])
        attrs = " (%s:%s %04o)" % (_name(pwd.getpwuid, st.st_uid), _name(grp.getgrgid, st.st_gid), stat.S_IMODE(st.st_mode))
    return {
        "before_header": spec["path"] + attrs if before["exists"] else "%s (absent)" % spec["path"],
        "after_header": "%s (%s:%s %s)" % (spec["path"], spec["owner"], spec["group"], spec["mode"]),
        "before": _shown(spec, before_text),
        "after": _shown(spec, spec["content"]),
    }


def _name(lookup, number):
    try:
        return lookup(number)[0]
    except KeyError:
        return str(number)


def make_parents(path, created=None):
    """Missing parent directories are made root 0755; existing ones are left as they are. Each directory made is
    appended to ``created`` (so that a failed change can remove it again)."""
    parent = os.path.dirname(path)
    missing = []
    while parent and not os.path.isdir(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    for directory in reversed(missing):
        with _files.writing(directory, action="make", purpose="a parent directory of %s" % path):
            os.mkdir(directory, 0o755)
            if created is not None:
                created.append(directory)
            os.chown(directory, 0, 0)
            os.chmod(directory, 0o755)


def write_atomically(spec, created=None):
    """The spec's file through the collection's one writer (module_utils/_files.py), its parents made first."""
    ids = account_ids(spec["owner"], spec["group"])
    if ids is None:
        raise RolloutFailed("%s: owner %s:%s does not exist on this host" % (spec["path"], spec["owner"], spec["group"]))
    make_parents(spec["path"], created)
    _files.write_atomically(spec["path"], spec["content"].encode("utf-8"), ids, int(spec["mode"], 8))


def set_attributes(spec):
    ids = account_ids(spec["owner"], spec["group"])
    if ids is None:
        raise RolloutFailed("%s: owner %s:%s does not exist on this host" % (spec["path"], spec["owner"], spec["group"]))
    with _files.writing(spec["path"], action="set the owner and mode of"):
        os.chown(spec["path"], *ids)
        os.chmod(spec["path"], int(spec["mode"], 8))


def spec_problems(params):
    """Every file and directory spec that cannot be written as given (path, mode, owner, group), one line each,
    naming the option: checked before the plan, so that a bad spec never leaves a first file written."""
    problems = []

    def check(where, path, mode, owner, group, mode_required):
        if not path or not os.path.isabs(path) or os.path.normpath(path) != path or path == "/":
            problems.append("%s.path %r: must be an absolute, normalised path of a file" % (where, path))
        if (mode is not None or mode_required) and not (isinstance(mode, str) and _OCTAL_MODE.fullmatch(mode)):
            problems.append("%s.mode %r (%s): must be an octal mode such as \"0640\"; this engine sets modes with "
                            "chmod and takes no symbolic modes" % (where, mode, path))
        for option, name in (("owner", owner), ("group", group)):
            if name is not None and (not isinstance(name, str) or not name.strip() or ":" in name):
                problems.append("%s.%s %r (%s): must be the name of a user or group" % (where, option, name, path))

    for index, directory in enumerate(params.get("directories") or []):
        check("directories[%d]" % index, directory.get("path"), directory.get("mode"), directory.get("owner"),
              directory.get("group"), False)
    seen = {}  # path -> (where, instance, spec) of its first present writer
    for index, instance in enumerate(params.get("instances") or []):
        present = instance.get("state", "present") == "present"
        for number, spec in enumerate(instance.get("files") or []):
            where = "instances[%d].files[%d]" % (index, number)
            # An absent instance's files are only removed: their path is all that counts.
            check(where, spec.get("path"), spec.get("mode"), spec.get("owner"), spec.get("group"), present)
            if not present:
                continue
            first = seen.setdefault(spec.get("path"), (where, instance.get("name"), spec))
            if first[2] is spec:
                continue
            # A file two instances share (a kubeconfig given to both) is written once: it must be the same file.
            differs = [key for key in _SHARED_KEYS if spec.get(key) != first[2].get(key)]
            if first[1] == instance.get("name") or differs:
                problems.append("%s.path %s (instance %s): also %s (instance %s)%s; one file can have one content: "
                                "give both instances the same one, or each its own path"
                                % (where, spec["path"], instance.get("name"), first[0], first[1],
                                   " with another %s" % ", ".join(differs) if differs else ""))
    return problems


# What a file shared by instances must agree on.
_SHARED_KEYS = ("content", "owner", "group", "mode")


def file_owners(instances):
    """Which instance writes, or removes, each file: the first present instance that lists it, else (no present
    instance uses it) the first absent one. A file instances share is written once, and removed only with the last
    instance that uses it."""
    owners = {}
    for state in ("present", "absent"):
        for instance in instances:
            if instance.get("state", "present") == state:
                for spec in instance.get("files") or []:
                    owners.setdefault(spec["path"], instance["name"])
    return owners


def owner_problems(specs):
    """Owners and groups that do not exist on this host (checked before the first write, not in check mode: a
    play may create the account in the same run)."""
    problems = []
    for spec in specs:
        owner, group = spec.get("owner") or "root", spec.get("group") or "root"
        if account_ids(owner, group) is None:
            problems.append("%s: owner %s:%s does not exist on this host" % (spec["path"], owner, group))
        elif os.path.isdir(spec["path"]) and not spec.get("directory"):
            problems.append("%s is a directory, not a file" % spec["path"])
    return problems


def installed_port(instance):
    """The secure port the instance's installed unit or manifest (its last file, written last) gives
    kube-scheduler; None when it is not installed."""
    path = instance["files"][-1]["path"] if instance.get("files") else None
    if not path or not os.path.isfile(path):
        return None
    return secure_port(read_file(path)["content"] or "")


def wanted_port(instance):
    """The secure port the instance's new unit or manifest gives kube-scheduler."""
    return secure_port(instance["files"][-1].get("content") or "") if instance.get("files") else None


def secure_port(text):
    """The --secure-port of a unit or manifest, else kube-scheduler's default."""
    found = _SECURE_PORT.search(text)
    return int(found.group(1)) if found else DEFAULT_SECURE_PORT


# kube-scheduler's --secure-port as the collection's units and manifests and kubeadm's manifests write it.
_SECURE_PORT = re.compile(r"--secure-port=([0-9]{1,5})\b")
DEFAULT_SECURE_PORT = 10259
