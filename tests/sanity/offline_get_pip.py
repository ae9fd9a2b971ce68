"""Offline replacement for the get-pip.py that ansible-test downloads to bootstrap pip in its sanity venvs.

That download comes from a host outside the package registries this project can reach, so the Makefile puts this
script in ansible-test's cache instead: ensurepip gives the venv a pip, which then installs exactly what get-pip
was asked for (ansible-test's pinned pip) from the package index.
"""

import subprocess
import sys

# In a child process: ensurepip.bootstrap() would point PIP_CONFIG_FILE at /dev/null in this one, and the pip
# install below needs the machine's pip configuration (index and certificates).
subprocess.check_call([sys.executable, "-m", "ensurepip"])
# get-pip's own options; plain pip install does not know them.
ARGS = [arg for arg in sys.argv[1:] if arg not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"] + ARGS))
