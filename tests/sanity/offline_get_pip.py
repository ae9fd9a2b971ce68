"""Offline replacement for the get-pip.py that ansible-test downloads to bootstrap pip in its sanity venvs.

That download comes from a host outside the package registries this project can reach, so the Makefile puts this
script in ansible-test's cache instead: ensurepip gives the venv a pip, which then installs exactly what get-pip
was asked for (ansible-test's pinned pip) from the package index.
"""

import ensurepip
import subprocess
import sys

ensurepip.bootstrap()
# get-pip's own options; plain pip install does not know them.
ARGS = [arg for arg in sys.argv[1:] if arg not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"] + ARGS))
