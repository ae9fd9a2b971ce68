# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The canonical YAML of a config: sorted keys, block style, plain YAML types only, trailing newline.

The same input always gives the same bytes, so the text can be compared, checksummed and written idempotently.
"""

from __future__ import annotations

import hashlib


def render_yaml(data) -> str:
    """safe_dump, so no Python-specific tags; strings such as "yes" or "1.0" come out quoted."""
    import yaml
    return yaml.safe_dump(data, default_flow_style=False, sort_keys=True, allow_unicode=True,
                          indent=2, width=1 << 30, explicit_start=False)


def checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
