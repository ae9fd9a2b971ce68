"""Pin an upstream release as a Go module of this project: ``pin.py kubernetes 1.37.2`` (``etcd 3.6.5``,
``scheduler-plugins 0.34.7``).

Writes ``tests/binaries/modules/<project>-v<version>/go.mod`` and its ``go.sum``, which ``build.py`` then builds
from. Everything comes from the Go module proxy, as for any Go dependency; nothing of upstream's is copied here.

For Kubernetes the module requires ``k8s.io/kubernetes v<version>`` and replaces every staging module that the
release's own ``go.mod`` points at ``./staging/src/k8s.io/...`` with its published ``v0.<minor>.<patch>`` (the way
kubernetes-sigs/scheduler-plugins depends on Kubernetes), and names the Go toolchain of the release's own
``.go-version`` (what the official release was built with; kube-scheduler's error texts carry its words).
``go.sum`` is written by ``go list -mod=mod`` over the components, so later builds verify every module they use.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import releases  # noqa: E402  pylint: disable=wrong-import-position


def download(module: str, version: str) -> dict:
    """`go mod download -json` of one module version: its GoMod file and unpacked Dir."""
    answer = subprocess.run(["go", "mod", "download", "-json", "%s@%s" % (module, version)],
                            capture_output=True, text=True, check=False, env=releases.go_env())
    info = json.loads(answer.stdout or "{}")
    if answer.returncode or info.get("Error"):
        sys.exit("go mod download %s@%s: %s" % (module, version, info.get("Error") or answer.stderr.strip()))
    return info


def kubernetes_go_mod(version: str) -> str:
    info = download("k8s.io/kubernetes", "v" + version)
    with open(info["GoMod"], encoding="utf-8") as handle:
        upstream = handle.read()
    with open(os.path.join(info["Dir"], ".go-version"), encoding="utf-8") as handle:
        toolchain = handle.read().strip()
    go_line = re.search(r"^go (\S+)$", upstream, re.M).group(1)
    staging = re.findall(r"^\s*(k8s\.io/\S+) => \./staging/src/\1$", upstream, re.M)
    minor_patch = version.split(".", 1)[1]
    replaces = "".join("\t%s => %s v0.%s\n" % (name, name, minor_patch) for name in staging)
    return ("// Kubernetes v{v} from upstream Go modules (tests/binaries/pin.py wrote this; build.py builds it).\n"
            "module kubesched.test/binaries/kubernetes\n\ngo {go}\n\ntoolchain go{tc}\n\n"
            "require k8s.io/kubernetes v{v}\n\nreplace (\n{r})\n").format(v=version, go=go_line, tc=toolchain,
                                                                          r=replaces)


def upstream_go_mod(module: str, version: str) -> tuple:
    """A release's own go.mod text, its go line and its toolchain (the go line where it names none)."""
    with open(download(module, "v" + version)["GoMod"], encoding="utf-8") as handle:
        upstream = handle.read()
    go_line = re.search(r"^go (\S+)$", upstream, re.M).group(1)
    toolchain = re.search(r"^toolchain go(\S+)$", upstream, re.M)
    return upstream, go_line, toolchain.group(1) if toolchain else go_line


def scheduler_plugins_go_mod(version: str, substitutes: dict) -> str:
    """scheduler-plugins pins its Kubernetes with replace directives, which apply only in its own main module: they
    are repeated here as they stand in its go.mod, so the build uses exactly the modules its release names, but for
    ``substitutes`` (module -> version: one the proxy refuses, replaced by a patch it serves, said in the go.mod)."""
    upstream, go_line, toolchain = upstream_go_mod("sigs.k8s.io/scheduler-plugins", version)
    lines = []
    for name, target, pinned in re.findall(r"^(?:replace )?\s*(\S+) => (\S+) (v\S+)$", upstream, re.M):
        why = " // the release names %s: the Go module proxy does not serve it" % pinned if name in substitutes else ""
        lines.append("\t%s => %s %s%s\n" % (name, target, substitutes.get(name, pinned), why))
    replaces = "".join(lines)
    text = ("// scheduler-plugins v{v} from upstream Go modules (tests/binaries/pin.py wrote this; build.py builds it).\n"
            "module kubesched.test/binaries/scheduler-plugins\n\ngo {go}\n\ntoolchain go{tc}\n\n"
            "require sigs.k8s.io/scheduler-plugins v{v}\n\nreplace (\n{r})\n")
    return text.format(v=version, go=go_line, tc=toolchain, r=replaces)


def etcd_go_mod(version: str) -> str:
    _upstream, go_line, toolchain = upstream_go_mod("go.etcd.io/etcd/server/v3", version)
    return ("// etcd v{v} from upstream Go modules (tests/binaries/pin.py wrote this; build.py builds it).\n"
            "module kubesched.test/binaries/etcd\n\ngo {go}\n\ntoolchain go{tc}\n\n"
            "require go.etcd.io/etcd/server/v3 v{v}\n").format(v=version, go=go_line, tc=toolchain)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("project", choices=sorted(releases.PROJECTS))
    parser.add_argument("version", help="an exact release, e.g. 1.37.2 (kubernetes) or 3.6.5 (etcd)")
    parser.add_argument("components", nargs="*", help="default: every component of the project (the proxy may "
                                                      "not serve every staging module a component needs)")
    parser.add_argument("--substitute", action="append", default=[], metavar="MODULE=VERSION",
                        help="scheduler-plugins: build with this version of a module its release names, where the "
                             "proxy refuses that one (k8s.io/csi-translation-lib=v0.34.4)")
    args = parser.parse_args()
    substitutes = dict(item.split("=", 1) for item in args.substitute)
    packages = releases.PROJECTS[args.project]["packages"]
    components = args.components or list(packages)
    if args.project == "scheduler-plugins":
        text = scheduler_plugins_go_mod(args.version, substitutes)
    else:
        text = {"kubernetes": kubernetes_go_mod, "etcd": etcd_go_mod}[args.project](args.version)
    text = text.replace("\n", "\n%s%s\n" % (releases.COMPONENTS_LINE, " ".join(components)), 1)
    directory = releases.module_dir(args.project, args.version)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "go.mod"), "w", encoding="utf-8") as handle:
        handle.write(text)
    open(os.path.join(directory, "go.sum"), "a", encoding="utf-8").close()
    answer = subprocess.run(["go", "list", "-mod=mod", "-deps", "-f", "{{.ImportPath}}"] + [packages[c] for c in components],
                            cwd=directory, capture_output=True, text=True, check=False,
                            env=releases.go_env(releases.toolchain(directory)))
    if answer.returncode:
        shutil.rmtree(directory)
        sys.exit("go list of %s in %s failed (nothing pinned):\n%s" % (" ".join(components), directory, answer.stderr))
    count = len(answer.stdout.split())
    print("pinned %s %s (%s) in %s: %d packages" % (args.project, args.version, " ".join(components), directory, count))
    return 0


if __name__ == "__main__":
    sys.exit(main())
