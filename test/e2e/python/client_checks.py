"""The official Python client (Debian's python3-kubernetes) against a skiff cluster.

It sends what Go clients never do: booleans as `True` (watch=True, orphanDependents=True,
follow=True, allowWatchBookmarks=True). Each check prints `ok: ...`; the first failure raises.
Usage: client_checks.py KUBECONFIG NODE_NAME
"""
import sys
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

NS = 'py'


def eventually(what, fn, timeout=20.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            value = fn()
            if value:
                return value
        except ApiException as e:
            last = e
        time.sleep(0.2)
    raise AssertionError('timed out waiting for %s (last error: %s)' % (what, last))


def main(kubeconfig, node):
    config.load_kube_config(config_file=kubeconfig)
    core = client.CoreV1Api()
    apps = client.AppsV1Api()

    version = client.VersionApi().get_code()
    assert version.major == '1', version
    print('ok: version %s' % version.git_version)

    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    names = [n.metadata.name for n in core.list_namespace().items]
    assert 'kube-system' in names and NS in names, names
    print('ok: namespaces listed')

    # watch=True must be a watch, not a list.
    rv = core.list_namespaced_config_map(NS).metadata.resource_version
    core.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name='py-cm'), data={'a': '1'}))
    w = watch.Watch()
    seen = None
    for event in w.stream(core.list_namespaced_config_map, NS, resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=10):
        if event['type'] == 'ADDED' and event['object'].metadata.name == 'py-cm':
            seen = event
            w.stop()
    assert seen is not None, 'no ADDED event for py-cm from watch=True'
    print('ok: watch=True streams events')

    core.patch_namespaced_config_map('py-cm', NS, {'data': {'b': '2'}})
    cm = core.read_namespaced_config_map('py-cm', NS)
    assert cm.data == {'a': '1', 'b': '2'}, cm.data
    print('ok: strategic merge patch')

    # orphanDependents=True must orphan: the ReplicaSet goes, its pods stay, without owners.
    labels = {'app': 'py-rs'}
    apps.create_namespaced_replica_set(NS, client.V1ReplicaSet(
        metadata=client.V1ObjectMeta(name='py-rs'),
        spec=client.V1ReplicaSetSpec(
            replicas=2,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(node_selector={'no-such-node': 'x'}, containers=[client.V1Container(name='c', image='busybox', command=['sleep', '60'])]),
            ),
        ),
    ))
    pods = eventually('2 pods of py-rs', lambda: (lambda p: p if len(p) == 2 else None)(core.list_namespaced_pod(NS, label_selector='app=py-rs').items))
    assert all(p.metadata.owner_references for p in pods)
    apps.delete_namespaced_replica_set('py-rs', NS, orphan_dependents=True)

    def rs_gone():
        try:
            apps.read_namespaced_replica_set('py-rs', NS)
            return False
        except ApiException as e:
            return e.status == 404
    eventually('py-rs deleted', rs_gone)
    left = core.list_namespaced_pod(NS, label_selector='app=py-rs').items
    assert sorted(p.metadata.name for p in left) == sorted(p.metadata.name for p in pods), 'orphaned pods were deleted: %s' % [p.metadata.name for p in left]
    assert all(not p.metadata.owner_references for p in left), 'orphaned pods still name their owner'
    print('ok: orphanDependents=True orphans the pods')

    # follow=True must follow the log until the container ends.
    core.create_namespaced_pod(NS, client.V1Pod(
        metadata=client.V1ObjectMeta(name='py-log'),
        spec=client.V1PodSpec(node_name=node, restart_policy='Never', containers=[client.V1Container(
            name='c', image='busybox', command=['sh', '-c', 'echo one; sleep 3; echo two'])]),
    ))
    eventually('first log line', lambda: 'one' in core.read_namespaced_pod_log('py-log', NS))
    followed = core.read_namespaced_pod_log('py-log', NS, follow=True, _preload_content=False).data.decode()
    assert followed.split() == ['one', 'two'], 'follow=True returned %r' % followed
    print('ok: follow=True follows the log')

    # The process runtime has no container to enter: exec is refused, saying why.
    try:
        stream(core.connect_get_namespaced_pod_exec, 'py-log', NS, command=['true'], stdout=True, stderr=True, stdin=False, tty=False)
        raise AssertionError('exec succeeded')
    except ApiException as e:
        # This websocket-client shows only the handshake's status line, not the Status body.
        text = '%s %s' % (e.reason, e.body)
        assert '--runtime containerd' in text or 'Handshake status 400' in text, text
    print('ok: exec on the process runtime answers with its limitation')

    core.delete_namespace(NS)
    print('ok: done')


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
