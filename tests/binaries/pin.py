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
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import releases  # noqa: E402  pylint: disable=wrong-import-position


def download(module: str, version: str) -> dict:
    """`go mod download -json` of one module version: its GoMod file and Zip. A release that needs a newer Go than
    the machine's (1.38 needs Go 1.27) is downloaded all the same, only not unpacked: its pinned toolchain builds it."""
    answer = subprocess.run(["go", "mod", "download", "-json", "%s@%s" % (module, version)],
                            capture_output=True, text=True, check=False, env=releases.go_env())
    info = json.loads(answer.stdout or "{}")
    error = info.get("Error") or answer.stderr.strip()
    newer_go = re.search(r" requires go >= \S+ \(running go ", error) and info.get("GoMod") and info.get("Zip")
    if (answer.returncode or info.get("Error")) and not newer_go:
        sys.exit("go mod download %s@%s: %s" % (module, version, error))
    return info


def kubernetes_go_mod(version: str, substitutes: dict) -> str:
    info = download(releases.PROJECTS["kubernetes"]["module"], "v" + version)
    with open(info["GoMod"], encoding="utf-8") as handle:
        upstream = handle.read()
    with zipfile.ZipFile(info["Zip"]) as archive:
        toolchain = archive.read("k8s.io/kubernetes@v%s/.go-version" % version).decode().strip()
    go_line = re.search(r"^go (\S+)$", upstream, re.M).group(1)
    staging = re.findall(r"^\s*(k8s\.io/\S+) => \./staging/src/\1$", upstream, re.M)
    minor_patch = version.split(".", 1)[1]
    replaces = "".join("\t%s => %s v0.%s\n" % (name, name, minor_patch) for name in staging)
    replaces += "".join(_replace(name, name, _required(upstream, name), substitutes) for name in sorted(substitutes))
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


def _replace(name: str, target: str, pinned: str, substitutes: dict) -> str:
    """One replace line: ``target`` at ``pinned`` (the version the release names), or at the version
    ``substitutes`` gives for ``name`` where the Go module proxy refuses that one, said on the line."""
    if name not in substitutes:
        return "\t%s => %s %s\n" % (name, target, pinned)
    return "\t%s => %s %s // the release names %s: the Go module proxy does not serve it\n" % (
        name, target, substitutes[name], pinned)


def _required(upstream: str, name: str) -> str:
    """The version of ``name`` a go.mod requires."""
    return re.search(r"^\s*(?:require )?%s (v\S+)" % re.escape(name), upstream, re.M).group(1)


def scheduler_plugins_go_mod(version: str, substitutes: dict) -> str:
    """scheduler-plugins pins its Kubernetes with replace directives, which apply only in its own main module: they
    are repeated here as they stand in its go.mod, so the build uses exactly the modules its release names, but for
    ``substitutes`` (module -> version: one the proxy refuses, replaced by a patch it serves, said in the go.mod)."""
    upstream, go_line, toolchain = upstream_go_mod(releases.PROJECTS["scheduler-plugins"]["module"], version)
    lines = []
    for name, target, pinned in re.findall(r"^(?:replace )?\s*(\S+) => (\S+) (v\S+)$", upstream, re.M):
        lines.append(_replace(name, target, pinned, substitutes))
    replaces = "".join(lines)
    text = ("// scheduler-plugins v{v} from upstream Go modules (tests/binaries/pin.py wrote this; build.py builds it).\n"
            "module kubesched.test/binaries/scheduler-plugins\n\ngo {go}\n\ntoolchain go{tc}\n\n"
            "require sigs.k8s.io/scheduler-plugins v{v}\n\nreplace (\n{r})\n")
    return text.format(v=version, go=go_line, tc=toolchain, r=replaces)


def plain_go_mod(project: str, version: str) -> str:
    """A project whose release builds from its module as it is (etcd, cri-tools)."""
    module = releases.PROJECTS[project]["module"]
    _upstream, go_line, toolchain = upstream_go_mod(module, version)
    return ("// {p} v{v} from upstream Go modules (tests/binaries/pin.py wrote this; build.py builds it).\n"
            "module kubesched.test/binaries/{p}\n\ngo {go}\n\ntoolchain go{tc}\n\n"
            "require {m} v{v}\n").format(p=project, m=module, v=version, go=go_line, tc=toolchain)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("project", choices=sorted(releases.PROJECTS))
    parser.add_argument("version", help="an exact release, e.g. 1.37.2 (kubernetes) or 3.6.5 (etcd)")
    parser.add_argument("components", nargs="*", help="default: every component of the project (the proxy may "
                                                      "not serve every staging module a component needs)")
    parser.add_argument("--substitute", action="append", default=[], metavar="MODULE=VERSION",
                        help="build with this version of a module the release needs, where the proxy refuses that "
                             "one (scheduler-plugins 0.34.7: k8s.io/csi-translation-lib=v0.34.4)")
    args = parser.parse_args()
    substitutes = dict(item.split("=", 1) for item in args.substitute)
    packages = releases.PROJECTS[args.project]["packages"]
    components = args.components or list(packages)
    if args.project == "scheduler-plugins":
        text = scheduler_plugins_go_mod(args.version, substitutes)
    elif args.project == "kubernetes":
        text = kubernetes_go_mod(args.version, substitutes)
    else:
        text = plain_go_mod(args.project, args.version)
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
