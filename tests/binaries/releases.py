"""What the tests' binaries are built from: the upstream projects, their components and where the pinned modules live.

A pinned release is a directory ``modules/<project>-v<version>`` holding a ``go.mod`` (its ``toolchain`` line names
the Go that builds it) and a ``go.sum``; ``pin.py`` writes one, ``build.py`` builds it. Shared by both and by
``tests/support/k8s_binaries.py``.
"""
from __future__ import annotations

import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
MODULES = os.path.join(HERE, "modules")

# project -> its main module, its components' main packages, and the -X flags that stamp a release's version the way
# upstream does (with the Kubernetes release the build is on, or the project's own: stamped_with).
PROJECTS = {
    "kubernetes": {
        "module": "k8s.io/kubernetes",
        "packages": {
            "kube-scheduler": "k8s.io/kubernetes/cmd/kube-scheduler",
            "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
            "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
            "kubelet": "k8s.io/kubernetes/cmd/kubelet",
            "kube-proxy": "k8s.io/kubernetes/cmd/kube-proxy",
        },
        # hack/lib/version.sh: every key twice, for k8s.io/client-go/pkg/version and k8s.io/component-base/version.
        "stamp_packages": ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version"),
        "stamped_with": "kubernetes",
        # hack/lib/golang.sh builds release binaries with these tags (grpcnotrace where not debugging).
        "tags": "selinux,notest,grpcnotrace",
        "stamp_keys": ("gitVersion", "gitMajor", "gitMinor", "gitTreeState", "buildDate"),
    },
    # kubernetes-sigs/scheduler-plugins: its kube-scheduler (cmd/scheduler: the Kubernetes release it is built on,
    # with its out-of-tree plugins registered) and its controller (PodGroup and ElasticQuota status). Its Makefile
    # stamps only component-base's gitVersion, with its own release; a v0.33.5 so stamped refuses to start
    # ("emulation version 0.33 is not between [1.31, 0.33.0]": component-base 1.33 takes the binary's version from
    # gitVersion), so the stamp here is the Kubernetes release it is built on (`--version`: Kubernetes v1.33.5).
    "scheduler-plugins": {
        "module": "sigs.k8s.io/scheduler-plugins",
        "packages": {
            "scheduler-plugins-scheduler": "sigs.k8s.io/scheduler-plugins/cmd/scheduler",
            "scheduler-plugins-controller": "sigs.k8s.io/scheduler-plugins/cmd/controller",
        },
        "stamp_packages": ("k8s.io/component-base/version",),
        "stamped_with": "kubernetes",
        "stamp_keys": ("gitVersion",),
        "tags": "",
    },
    # kubernetes-sigs/cri-tools: crictl, the CRI client every kubeadm node has (kubeadm's preflight requires it), on
    # the real nodes whose static-pod preflight runs without containerd's ctr. Its Makefile stamps its own release.
    "cri-tools": {
        "module": "sigs.k8s.io/cri-tools",
        "packages": {"crictl": "sigs.k8s.io/cri-tools/cmd/crictl"},
        "stamp_packages": ("sigs.k8s.io/cri-tools/pkg/version",),
        "stamped_with": "own",
        "stamp_keys": ("Version",),
        "tags": "",
    },
    "etcd": {
        "module": "go.etcd.io/etcd/server/v3",
        "packages": {"etcd": "go.etcd.io/etcd/server/v3"},
        "stamp_packages": (),
        "stamp_keys": (),
        "tags": "",
    },
}


# The second line of a pinned go.mod: the components its go.sum covers (what build.py builds by default).
COMPONENTS_LINE = "// components: "


def components(directory: str) -> list[str]:
    with open(os.path.join(directory, "go.mod"), encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(COMPONENTS_LINE):
                return line[len(COMPONENTS_LINE):].split()
    return []


def module_dir(project: str, version: str) -> str:
    return os.path.join(MODULES, "%s-v%s" % (project, version))


def pinned() -> dict[str, list[str]]:
    """project -> the versions pinned in modules/, oldest first."""
    found: dict[str, list[str]] = {}
    for name in sorted(os.listdir(MODULES)) if os.path.isdir(MODULES) else ():
        match = re.fullmatch(r"([a-z-]+?)-v(\d+\.\d+\.\d+(?:-[a-z]+\.\d+)?)", name)
        if match and os.path.isfile(os.path.join(MODULES, name, "go.sum")):
            found.setdefault(match.group(1), []).append(match.group(2))
    return {project: sorted(versions, key=version_key) for project, versions in found.items()}


def version_key(version: str) -> tuple:
    """'1.38.0-rc.0' sorts before '1.38.0'."""
    core, pre = (version.split("-", 1) + [""])[:2]
    return tuple(int(part) for part in core.split(".")) + ((0, pre) if pre else (1, ""),)


def kubernetes_release(directory: str) -> str:
    """The k8s.io/kubernetes release a pinned module builds on: '1.33.5'."""
    with open(os.path.join(directory, "go.mod"), encoding="utf-8") as handle:
        text = handle.read()
    found = re.search(r"^\s*k8s\.io/kubernetes(?: => k8s\.io/kubernetes)? v(\S+)$", text, re.M) or \
        re.search(r"^require k8s\.io/kubernetes v(\S+)$", text, re.M)
    return found.group(1)


def toolchain(directory: str) -> str:
    """The `toolchain` line of a pinned module's go.mod: 'go1.26.10'; its go line where the go command dropped the
    toolchain line as the same (cri-tools 1.37.0: go 1.26.6)."""
    with open(os.path.join(directory, "go.mod"), encoding="utf-8") as handle:
        text = handle.read()
    named = re.search(r"^toolchain (go\S+)$", text, re.M)
    return named.group(1) if named else "go" + re.search(r"^go (\S+)$", text, re.M).group(1)


def go_env(go_toolchain: str = "local") -> dict[str, str]:
    """The go command's environment: the pinned toolchain (the Go module proxy serves it like a module), the
    caches where Go keeps them (a later run finds them), static binaries as upstream's release builds are."""
    env = dict(os.environ, GOTOOLCHAIN=go_toolchain, CGO_ENABLED="0", GOFLAGS="-buildvcs=false")
    env.pop("GOWORK", None)
    return env
