"""Wait until the metrics reader's token Secret holds a token (kube-controller-manager's token controller fills it
after playbooks/metrics_access.yml creates it): python3 wait_token.py ADMIN_KUBECONFIG NAMESPACE SERVICE_ACCOUNT.
The token itself is never printed."""
from __future__ import annotations

import sys
import time

from kubernetes import client, config

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster.metrics_access import token_secret_name

TIMEOUT = 60.0


def main() -> int:
    kubeconfig, namespace, account = sys.argv[1:4]
    api = client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig))
    name = token_secret_name(account)
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            if (api.read_namespaced_secret(name, namespace).data or {}).get("token"):
                print("the token of %s/%s is there" % (namespace, name))
                return 0
        except client.exceptions.ApiException as error:
            if error.status != 404:
                raise
        time.sleep(0.5)
    print("no token in %s/%s after %.0fs: is kube-controller-manager's token controller running on the control-plane "
          "host (systemctl status kube-controller-manager)?" % (namespace, name, TIMEOUT), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
