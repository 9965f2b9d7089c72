import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Endpoints } from '../../src/api/kinds/endpoints.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { Service } from '../../src/api/kinds/service.js';
import { EndpointsController } from '../../src/controllers/endpoints.js';
import { EndpointSliceController, MAX_ENDPOINTS_PER_SLICE, desiredSlices } from '../../src/controllers/endpointslices.js';
import type { EndpointSlice } from '../../src/api/kinds/endpointslice.js';
import { eventually, nsPath, startControllers, startHarness, type Harness } from './workload-harness.js';

describe('Endpoints controller', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  const v1 = (ns: string, resource: string, name?: string) => nsPath(ns, resource, name, 'v1');
  async function pod(ns: string, name: string, labels: Record<string, string>, status: { ip?: string; ready?: boolean; node?: string }, ports: { name: string; containerPort: number }[] = []): Promise<void> {
    await h.client.create<Pod>(v1(ns, 'pods'), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels },
      spec: { nodeName: status.node ?? 'node-a', containers: [{ name: 'c', image: 'x', ports }] },
    });
    if (status.ip === undefined) return;
    await h.client.patch(`${v1(ns, 'pods', name)}/status`, {
      status: { phase: 'Running', podIP: status.ip, conditions: [{ type: 'Ready', status: status.ready ? 'True' : 'False' }] },
    }, 'merge');
  }
  const service = (ns: string, name: string, spec: Service['spec'], labels?: Record<string, string>) =>
    h.client.create<Service>(v1(ns, 'services'), { apiVersion: 'v1', kind: 'Service', metadata: { name, ...(labels ? { labels } : {}) }, spec });
  const endpoints = (ns: string, name: string) => h.client.get<Endpoints>(v1(ns, 'endpoints', name)).catch(() => undefined);
  /** Subsets as "ready ips | not-ready ips | ports" lines, for readable comparisons. */
  const view = (e: Endpoints | undefined) =>
    (e?.subsets ?? []).map((s) => `${(s.addresses ?? []).map((a) => a.targetRef?.name).join(',')} | ${(s.notReadyAddresses ?? []).map((a) => a.targetRef?.name).join(',')} | ${(s.ports ?? []).map((p) => `${p.name ?? ''}:${p.port}`).join(',')}`);

  it('lists selected pods, ready or not, one subset per port set, and follows pods and the Service', async () => {
    const ns = await h.namespace('ep');
    const running = startControllers(h.client, [new EndpointsController()]);
    try {
      await pod(ns, 'web-1', { app: 'web' }, { ip: '10.0.0.1', ready: true }, [{ name: 'http', containerPort: 8080 }]);
      await pod(ns, 'web-2', { app: 'web' }, { ip: '10.0.0.2', ready: false }, [{ name: 'http', containerPort: 8080 }]);
      await pod(ns, 'web-3', { app: 'web' }, { ip: '10.0.0.3', ready: true }, [{ name: 'http', containerPort: 9090 }]);
      await pod(ns, 'web-noip', { app: 'web' }, {});
      await pod(ns, 'other', { app: 'other' }, { ip: '10.0.0.9', ready: true }, [{ name: 'http', containerPort: 8080 }]);
      await service(ns, 'web', { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }, { name: 'metrics', port: 9100, targetPort: 9100 }] }, { team: 'a' });
      await eventually(async () => view(await endpoints(ns, 'web')).join('\n') === ['web-1 | web-2 | http:8080,metrics:9100', 'web-3 |  | http:9090,metrics:9100'].join('\n'), 5000, 'endpoints of web');
      const ep = (await endpoints(ns, 'web'))!;
      assert.equal(ep.metadata.labels?.team, 'a', 'Service labels copied');
      assert.ok(ep.metadata.annotations?.['endpoints.kubernetes.io/last-change-trigger-time']);
      const a = ep.subsets![0]!.addresses![0]!;
      assert.deepEqual([a.ip, a.nodeName, a.targetRef?.kind, a.targetRef?.namespace], ['10.0.0.1', 'node-a', 'Pod', ns]);

      // web-2 becomes ready, web-1 is relabelled away, web-3 is deleted.
      await h.client.patch(`${v1(ns, 'pods', 'web-2')}/status`, { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, 'strategic');
      await h.client.patch(v1(ns, 'pods', 'web-1'), { metadata: { labels: { app: 'gone' } } }, 'merge');
      await h.client.delete(v1(ns, 'pods', 'web-3'), { gracePeriodSeconds: 0 });
      await eventually(async () => view(await endpoints(ns, 'web')).join('\n') === 'web-2 |  | http:8080,metrics:9100', 5000, 'endpoints follow the pods');

      // An edit by hand is undone; a deleted Service takes its Endpoints along.
      const cur = (await endpoints(ns, 'web'))!;
      await h.client.replace(v1(ns, 'endpoints', 'web'), { ...cur, subsets: [] });
      await eventually(async () => view(await endpoints(ns, 'web')).length === 1, 5000, 'restored');
      await h.client.delete(v1(ns, 'services', 'web'));
      await eventually(async () => (await endpoints(ns, 'web')) === undefined, 5000, 'Endpoints deleted with the Service');
    } finally {
      running.stop();
    }
  });

  it('headless and publishNotReadyAddresses Services; selector-less Services (an empty selector counts as none) keep hand-written Endpoints', async () => {
    const ns = await h.namespace('ep2');
    const running = startControllers(h.client, [new EndpointsController()]);
    try {
      await pod(ns, 'db-0', { app: 'db' }, { ip: '10.0.1.1', ready: false });
      await service(ns, 'db', { selector: { app: 'db' }, clusterIP: 'None', publishNotReadyAddresses: true, ports: [{ port: 5432 }] });
      await eventually(async () => view(await endpoints(ns, 'db')).join() === 'db-0 |  | :5432', 5000, 'not-ready pod listed as ready');
      assert.equal((await endpoints(ns, 'db'))!.metadata.labels?.['service.kubernetes.io/headless'], '');

      await service(ns, 'external', { selector: {}, ports: [{ port: 443 }] });
      await h.client.create(v1(ns, 'endpoints'), { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'external' }, subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 443 }] }] });
      // Hand-written Endpoints without a Service at all stay too.
      await h.client.create(v1(ns, 'endpoints'), { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'orphan' }, subsets: [{ addresses: [{ ip: '192.0.2.11' }], ports: [{ port: 80 }] }] });
      await h.client.patch(v1(ns, 'endpoints', 'orphan'), { metadata: { labels: { touched: 'yes' } } }, 'merge');
      // Give the controller a pass over both (the db Service changing proves it is running).
      await h.client.patch(v1(ns, 'services', 'db'), { spec: { publishNotReadyAddresses: false } }, 'merge');
      await eventually(async () => view(await endpoints(ns, 'db')).join() === ' | db-0 | :5432', 5000, 'not ready again');
      assert.equal((await endpoints(ns, 'external'))?.subsets?.[0]?.addresses?.[0]?.ip, '192.0.2.10');
      assert.equal((await endpoints(ns, 'orphan'))?.subsets?.[0]?.addresses?.[0]?.ip, '192.0.2.11');
    } finally {
      running.stop();
    }
  });

  it('EndpointSlices: conditions per endpoint, one slice per port set, at most 100 endpoints each, owned by the Service', async () => {
    const ns = await h.namespace('eps');
    const running = startControllers(h.client, [new EndpointSliceController()]);
    const slices = async () =>
      (await h.client.list<EndpointSlice>(nsPath(ns, 'endpointslices', undefined, 'discovery.k8s.io/v1'), { labelSelector: 'kubernetes.io/service-name=api' })).items.sort((a, b) => (a.endpoints?.length ?? 0) - (b.endpoints?.length ?? 0));
    try {
      await pod(ns, 'api-ready', { app: 'api' }, { ip: '10.0.2.1', ready: true }, [{ name: 'http', containerPort: 8080 }]);
      await pod(ns, 'api-warming', { app: 'api' }, { ip: '10.0.2.2', ready: false }, [{ name: 'http', containerPort: 8080 }]);
      await pod(ns, 'api-alt', { app: 'api' }, { ip: '10.0.2.3', ready: true }, [{ name: 'http', containerPort: 8081 }]);
      const svc = await service(ns, 'api', { selector: { app: 'api' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] });
      await eventually(async () => (await slices()).map((x) => x.endpoints?.length).join() === '1,2', 5000, 'two slices (8081 and 8080)');
      const [alt, main] = await slices();
      assert.equal(main!.addressType, 'IPv4');
      assert.deepEqual(main!.ports, [{ name: 'http', protocol: 'TCP', port: 8080 }]);
      assert.deepEqual(alt!.ports, [{ name: 'http', protocol: 'TCP', port: 8081 }]);
      assert.deepEqual(main!.endpoints!.map((e) => [e.targetRef?.name, e.addresses.join(), e.conditions?.ready, e.conditions?.serving, e.conditions?.terminating]), [
        ['api-ready', '10.0.2.1', true, true, false],
        ['api-warming', '10.0.2.2', false, false, false],
      ]);
      assert.equal(main!.metadata.labels?.['endpointslice.kubernetes.io/managed-by'], 'endpointslice-controller.k8s.io');
      assert.deepEqual(main!.metadata.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]), [['Service', svc.metadata.uid, true]]);
      assert.match(main!.metadata.name!, /^api-/);

      // More pods than fit in one slice: the 8080 set spills into a second slice, names kept.
      const extra = MAX_ENDPOINTS_PER_SLICE;
      for (let i = 0; i < extra; i++) await pod(ns, `api-x${String(i).padStart(3, '0')}`, { app: 'api' }, { ip: `10.0.3.${i + 1}`, ready: true }, [{ name: 'http', containerPort: 8080 }]);
      await eventually(async () => (await slices()).map((x) => x.endpoints?.length).join() === `1,2,${MAX_ENDPOINTS_PER_SLICE}`, 15_000, 'spilled into a third slice');
      assert.ok((await slices()).some((x) => x.metadata.name === main!.metadata.name), 'the first 8080 slice kept its name');
      await h.client.delete(v1(ns, 'services', 'api'));
      await eventually(async () => (await slices()).length === 0, 5000, 'slices deleted with the Service');
    } finally {
      running.stop();
    }
  });

  it('slice conditions as upstream: serving is readiness, ready also needs not terminating unless publishNotReadyAddresses; an empty placeholder when nothing matches', () => {
    const mk = (name: string, ready: boolean, terminating: boolean): Pod => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'n', uid: name, labels: { app: 'a' }, ...(terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
      spec: { containers: [{ name: 'c' }] },
      status: { phase: 'Running', podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
    });
    const svc = (publishNotReadyAddresses: boolean): Service => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'n' }, spec: { selector: { app: 'a' }, ports: [{ port: 80 }], publishNotReadyAddresses } });
    const conds = (s: Service, ps: Pod[]) => desiredSlices(s, ps)[0]!.endpoints.map((e) => `${e.targetRef?.name}:${e.conditions?.ready}/${e.conditions?.serving}/${e.conditions?.terminating}`);
    const ps = [mk('up', true, false), mk('leaving', true, true), mk('warming', false, false)];
    assert.deepEqual(conds(svc(false), ps), ['leaving:false/true/true', 'up:true/true/false', 'warming:false/false/false']);
    assert.deepEqual(conds(svc(true), ps), ['leaving:true/true/true', 'up:true/true/false', 'warming:true/false/false']);
    assert.deepEqual(desiredSlices(svc(false), []), [{ addressType: 'IPv4', ports: [], endpoints: [] }]);
  });

  it('an endpoint carries its pod\'s hostname when the pod names the Service as its subdomain (what cluster DNS names a StatefulSet pod by)', () => {
    const mk = (name: string, subdomain: string | undefined): Pod => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'n', uid: name, labels: { app: 'a' } },
      spec: { containers: [{ name: 'c' }], hostname: name, ...(subdomain ? { subdomain } : {}) },
      status: { phase: 'Running', podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const svc: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'n' }, spec: { clusterIP: 'None', selector: { app: 'a' }, ports: [{ port: 80 }] } };
    const names = desiredSlices(svc, [mk('db-0', 's'), mk('db-1', 'other'), mk('db-2', undefined)])[0]!.endpoints.map((e) => `${e.targetRef?.name}:${e.hostname ?? '-'}`);
    assert.deepEqual(names, ['db-0:db-0', 'db-1:-', 'db-2:-']);
  });
});
