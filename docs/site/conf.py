# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sphinx configuration of the collection's docs site (`make docs`: antsibull-docs writes the RST, sphinx -W builds).

The collection's README.md is page "readme" (MyST), beside the Markdown pages it links (PAGES): a link between two
of them stays on the site, a link to a guide goes to its page, any other link to a file of the repository points at
the project's repository.
No network: intersphinx is not used. The few labels of Ansible's own docs that antsibull-docs refers to
(ansible_collections.<ns>.<name>.<plugin>_<type> and the pages below) are resolved to docs.ansible.com here; any
other unresolved reference stays a warning, which -W turns into a failed build.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from docutils import nodes

project = "kubesched.schedulers"
copyright = "kubesched.schedulers contributors"  # pylint: disable=redefined-builtin
title = "kubesched.schedulers"
html_short_title = "kubesched.schedulers"
extensions = ["sphinx_antsibull_ext", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
pygments_style = "ansible"
highlight_language = "YAML+Jinja"
html_theme = "sphinx_ansible_theme"
html_show_sphinx = False
html_use_smartypants = True
html_use_modindex = False
html_use_index = False
html_copy_source = False
default_role = "any"

ANSIBLE_DOCS = "https://docs.ansible.com/projects/ansible/devel/"
ANSIBLE_LABELS = {
    "ansible_configuration_settings": ("reference_appendices/config.html", "Ansible configuration settings"),
    "common_return_values": ("reference_appendices/common_return_values.html", "Return Values"),
    "action_plugins": ("plugins/action.html", "Action plugins"),
}
COLLECTION_LABEL = re.compile(r"^ansible_collections\.(?P<ns>\w+)\.(?P<name>\w+)\.(?P<plugin>\w+)_(?P<type>\w+)$")


def ansible_reference(app, env, node, contnode):  # pylint: disable=unused-argument
    """Resolve a reference to Ansible's docs or to another collection's plugin; None leaves it unresolved."""
    if node.get("refdomain") != "std" or node.get("reftype") != "ref":
        return None
    target = node.get("reftarget", "")
    if target in ANSIBLE_LABELS:
        path, text = ANSIBLE_LABELS[target]
    else:
        match = COLLECTION_LABEL.match(target)
        if not match or match.group("ns") == "kubesched":
            return None
        path = "collections/{ns}/{name}/{plugin}_{type}.html".format(**match.groupdict())
        text = None
    reference = nodes.reference("", "", internal=False, refuri=ANSIBLE_DOCS + path)
    reference += contnode if contnode is not None and contnode.astext() else nodes.Text(text or target)
    return reference


REPO = Path(__file__).resolve().parents[2]
REPOSITORY = "https://github.com/kubesched/schedulers/blob/main/"
_RELATIVE_LINK = re.compile(r"\]\((?!https?://|#)([^)\s]+)\)")
# The Markdown pages of the repository on the site, page name: file. The README links each one (or a page it links
# does); tests/unit/ee/test_docs_site.py checks that every Markdown file the README links is here.
PAGES = {
    "readme": "README.md",
    "installation": "docs/installation.md",
    "lease_rbac": "docs/lease-rbac.md",
    "input_model": "docs/input-model.md",
    "hostile_inputs": "docs/hostile-inputs.md",
    "versions": "docs/versions.md",
    "support_matrix": "docs/support-matrix.md",
    "versioning_policy": "docs/versioning-policy.md",
    "upstream_facts": "docs/upstream-facts.md",
    "benchmarks": "benchmarks/README.md",
    "contributing": "CONTRIBUTING.md",
    "tests": "tests/README.md",
}
_GUIDES = "docs/docsite/rst/"
# MyST gives each heading a GitHub-style anchor, so links such as versions.md#supported-versions resolve.
myst_heading_anchors = 4


def site_link(page, target):
    """Where a page's relative link goes on the site: another page, a guide, or the file in the repository."""
    path, _separator, fragment = target.partition("#")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    fragment = "#" + fragment if fragment else ""
    names = {file: name for name, file in PAGES.items()}
    if resolved in names:
        return names[resolved] + ".md" + fragment
    if resolved.startswith(_GUIDES) and resolved.endswith(".rst"):
        # The guide's page; MyST finds no anchor of its own in an RST page, so a section link lands on the page.
        return "docsite/" + resolved[len(_GUIDES):]
    return REPOSITORY + resolved + fragment


def write_pages(app):
    """The README and the pages it links, each with its links made to work on the site."""
    for name, file in PAGES.items():
        text = (REPO / file).read_text(encoding="utf-8")
        text = _RELATIVE_LINK.sub(lambda m, file=file: "](%s)" % site_link(file, m.group(1)), text)
        (Path(app.srcdir) / (name + ".md")).write_text(text, encoding="utf-8")


def link_pages(app, docname, source):  # pylint: disable=unused-argument
    """List the README and its pages in a table of contents of the collection index."""
    if docname == "index":
        source[0] += "\n\n.. toctree::\n   :caption: Overview\n\n%s\n" % "\n".join("   " + name for name in PAGES)


def setup(app):
    app.connect("missing-reference", ansible_reference)
    app.connect("builder-inited", write_pages)
    app.connect("source-read", link_pages)
