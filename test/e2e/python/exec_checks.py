"""Exec through the official Python client (Debian's python3-kubernetes), which speaks the
WebSocket channel protocol (v4.channel.k8s.io), not kubectl's SPDY.
Usage: exec_checks.py KUBECONFIG POD
"""
import sys

from kubernetes import client, config
from kubernetes.stream import stream


def main(kubeconfig, pod):
    config.load_kube_config(config_file=kubeconfig)
    core = client.CoreV1Api()
    out = stream(core.connect_get_namespaced_pod_exec, pod, 'default', command=['sh', '-c', 'echo "py in $(hostname)"'],
                 stdout=True, stderr=True, stdin=False, tty=False)
    assert out == 'py in %s\n' % pod, 'exec printed %r' % out
    print('ok: exec output')
    resp = stream(core.connect_get_namespaced_pod_exec, pod, 'default', command=['sh', '-c', 'exit 4'],
                  stdout=True, stderr=True, stdin=False, tty=False, _preload_content=False)
    resp.run_forever(timeout=20)
    assert resp.returncode == 4, 'exit code %r' % resp.returncode
    print('ok: exec exit code')


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
