"""The host modules on the oldest and the newest target Python the running ansible-core supports (its ansible-test
says which: 3.8 to 3.13 for 2.19, 3.9 to 3.14 for 2.20 and 2.21, 3.9 to 3.15 for 2.22), run as a master runs them:
ansible-playbook sends them through ansible-core's module transport to that interpreter. scheduler_config writes, keeps and check-modes a
config; serving_cert issues a certificate from a CA and keeps it; kubelet_static_pod_path reads a kubelet config.
A target Python this machine does not have (tests/support/find-python.sh: pyenv's, the system's) is skipped, saying
so; docs/support-matrix.md has what was measured."""
from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

import pytest
import yaml
from ansible_test._util.target.common.constants import CONTROLLER_PYTHON_VERSIONS, REMOTE_ONLY_PYTHON_VERSIONS

REPO = Path(__file__).resolve().parents[4]
TARGETS = REMOTE_ONLY_PYTHON_VERSIONS + CONTROLLER_PYTHON_VERSIONS

PLAY = """
- name: The host modules on one target Python
  hosts: localhost
  gather_facts: false
  vars:
    ansible_python_interpreter: {python}
    work: {work}
    config: {{profiles: [{{schedulerName: batch}}]}}
  tasks:
    - name: Which Python runs the modules
      ansible.builtin.setup: {{gather_subset: ["!all"], filter: [ansible_python]}}
      register: python
    - name: Write a config
      kubesched.schedulers.scheduler_config: {{kubernetes_version: "1.35.4", config: "{{{{ config }}}}", dest: "{{{{ work }}}}/config.yaml"}}
      register: written
    - name: Write it again
      kubesched.schedulers.scheduler_config: {{kubernetes_version: "1.35.4", config: "{{{{ config }}}}", dest: "{{{{ work }}}}/config.yaml"}}
      register: again
    - name: A change in check mode
      kubesched.schedulers.scheduler_config:
        kubernetes_version: "1.35.4"
        config: {{profiles: [{{schedulerName: other}}]}}
        dest: "{{{{ work }}}}/config.yaml"
      check_mode: true
      register: checked
    - name: Issue a serving certificate
      kubesched.schedulers.serving_cert: &cert
        cert_path: "{{{{ work }}}}/serving.crt"
        key_path: "{{{{ work }}}}/serving.key"
        ca_cert: "{{{{ work }}}}/ca.crt"
        ca_key: "{{{{ work }}}}/ca.key"
        common_name: batch-scheduler
        ip_sans: [127.0.0.1]
        dns_sans: [localhost]
      register: issued
    - name: Keep it
      kubesched.schedulers.serving_cert: *cert
      register: kept
    - name: Read the kubelet's static pod directory
      kubesched.schedulers.kubelet_static_pod_path:
        default_config: "{{{{ work }}}}/kubelet.yaml"
        env_files: []
      register: kubelet
    - name: Report
      ansible.builtin.copy:
        dest: "{{{{ work }}}}/report.yml"
        content: "{{{{ {{'python': python.ansible_facts.ansible_python.version_info[0:2], 'written': written.changed,
          'again': again.changed, 'checked': checked.changed, 'issued': issued.changed, 'kept': kept.changed,
          'path': kubelet.path}} | to_nice_yaml }}}}"
"""


def find_python(version):
    found = subprocess.run([str(REPO / "tests" / "support" / "find-python.sh"), version], capture_output=True,
                           text=True, check=False)
    return found.stdout.strip() if found.returncode == 0 else None


def ends():
    """Both ends of the running core's range (what it promises for the oldest and newest masters), and the newest
    this machine has when it lacks the newest."""
    present = [version for version in TARGETS if find_python(version)]
    return sorted({TARGETS[0], TARGETS[-1]} | set(present[-1:]), key=lambda v: tuple(int(p) for p in v.split(".")))


def make_ca(work):
    """A cluster CA as kubeadm makes one (RSA, self-signed, CA:true)."""
    # pylint: disable=import-outside-toplevel
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, key_cert_sign=True,
                                         content_commitment=False, data_encipherment=False, key_agreement=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    (work / "ca.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (work / "ca.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))


@pytest.mark.parametrize("version", ends())
def test_the_host_modules_run_on_the_target_python(tmp_path, ansible_playbook, version):
    python = find_python(version)
    if not python:
        pytest.skip("no Python %s on this machine (tests/support/find-python.sh; pyenv install %s)" % (version, version))
    work = tmp_path / "work"
    work.mkdir()
    make_ca(work)
    (work / "kubelet.yaml").write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                                       "staticPodPath: %s/manifests\n" % work)
    (tmp_path / "play.yml").write_text(PLAY.format(python=python, work=work))
    run = ansible_playbook(["-i", "localhost,", "-c", "local", tmp_path / "play.yml"])
    assert run.returncode == 0, run.stdout + run.stderr
    report = yaml.safe_load((work / "report.yml").read_text())
    assert report.pop("python")[:2] == [int(part) for part in version.split(".")]
    assert report == {"written": True, "again": False, "checked": True, "issued": True, "kept": False,
                      "path": "%s/manifests" % work}
    assert "batch" in (work / "config.yaml").read_text()
