// metrics.k8s.io/v1beta1, served by the API server itself in place of metrics-server: NodeMetrics
// and PodMetrics, get and list (with label and field selectors), in metrics-server's shapes and
// spellings — CPU in nanocores, memory in binary units, `timestamp` the end of the window the
// rate was measured over and `window` its length. Figures come from the node scraper's storage,
// or for nodes that serve no endpoint (a `skiff sim` fleet's) from the pods' requests.
import { badRequest, methodNotAllowed, notFound } from '../../api/errors.js';
import { parseFieldSelector } from '../../api/fields.js';
import { parseLabelSelector } from '../../api/labels.js';
import type { Pod } from '../../api/kinds/pod.js';
import type { KubeObject } from '../../api/types.js';
import type { UsageRate } from '../../resource-metrics/usage-rate.js';
import { cpuQuantity, goDuration, memoryQuantity } from '../../resource-metrics/quantities.js';
import { rfc3339 } from '../../util/time.js';
import type { DiscoveredResource } from '../discovery.js';
import { customKindDefinitions, type OpenApiSchema } from '../openapi/definitions.js';

import type { ResourceRequest } from '../http/request-info.js';
import type { MetricsStorage } from './metrics-storage.js';
import { includeObjectParam, negotiate } from '../http/negotiate.js';
import { metricsTable, type MetricsRow } from './metrics-table.js';
import { simulatedNodeRate, simulatedPodRates } from './simulated-metrics.js';

export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';
const API_VERSION = `${METRICS_GROUP}/${METRICS_VERSION}`;

const USAGE: OpenApiSchema = {
  type: 'object',
  description: 'Resources used: cpu in cores (a rate over the window), memory as the working set in bytes.',
  additionalProperties: { type: 'string', description: 'A quantity.' },
};

/** The OpenAPI schemas of the two kinds (for `kubectl explain`), beside the object metadata every kind has. */
const SCHEMAS: Record<'NodeMetrics' | 'PodMetrics', OpenApiSchema> = {
  NodeMetrics: {
    type: 'object',
    description: "A node's resource usage, measured over a window of time.",
    properties: {
      timestamp: { type: 'string', format: 'date-time', description: 'The end of the window the usage was measured over.' },
      window: { type: 'string', description: 'How long the window was, as a duration.' },
      usage: USAGE,
    },
  },
  PodMetrics: {
    type: 'object',
    description: "A pod's resource usage, container by container, measured over a window of time.",
    properties: {
      timestamp: { type: 'string', format: 'date-time', description: 'The end of the window the usage was measured over.' },
      window: { type: 'string', description: 'How long the window was, as a duration.' },
      containers: {
        type: 'array',
        description: "Each running container's usage.",
        items: { type: 'object', properties: { name: { type: 'string', description: "The container's name in the pod's spec." }, usage: USAGE } },
      },
    },
  },
};

function metricsType(resource: 'nodes' | 'pods', kind: 'NodeMetrics' | 'PodMetrics'): DiscoveredResource {
  return {
    group: METRICS_GROUP,
    version: METRICS_VERSION,
    resource,
    kind,
    singular: '',
    namespaced: resource === 'pods',
    shortNames: [],
    categories: [],
    subresources: [],
    verbs: ['get', 'list'],
    definitions: (prefix) => customKindDefinitions({ group: METRICS_GROUP, version: METRICS_VERSION, kind }, SCHEMAS[kind], prefix),
  };
}

/** What discovery lists for the group: metrics-server's two resources, get and list only. */
export const METRICS_TYPES: readonly DiscoveredResource[] = [metricsType('nodes', 'NodeMetrics'), metricsType('pods', 'PodMetrics')];

export function metricsTypeFor(group: string, version: string, resource: string): DiscoveredResource | undefined {
  return METRICS_TYPES.find((t) => t.group === group && t.version === version && t.resource === resource);
}

export interface MetricsApiDeps {
  now(): number;
  storage: MetricsStorage;
  resolutionMs: number;
  nodes(): KubeObject[];
  node(name: string): KubeObject | undefined;
  /** Pods of a namespace, or of all when undefined. */
  pods(namespace: string | undefined): Pod[];
  pod(namespace: string, name: string): Pod | undefined;
  /** Whether the node's figures are made from its pods' requests (it serves nothing to scrape). */
  simulated(node: KubeObject): boolean;
}

function usage(rate: UsageRate): { cpu: string; memory: string } {
  return { cpu: cpuQuantity(rate.nanoCores), memory: memoryQuantity(rate.memoryWorkingSetBytes) };
}

/** `created`: the request's time as RFC 3339 (metrics-server's objects are made when asked). */
function metadata(obj: KubeObject, created: string): KubeObject['metadata'] {
  return {
    name: obj.metadata.name!,
    ...(obj.metadata.namespace !== undefined ? { namespace: obj.metadata.namespace } : {}),
    creationTimestamp: created,
    ...(obj.metadata.labels ? { labels: obj.metadata.labels } : {}),
  };
}

export class MetricsApi {
  constructor(private readonly d: MetricsApiDeps) {}

  /** The answer to a request for the group (authorized already), in the shape `accept` asks for (JSON or a Table); throws a StatusError. */
  answer(info: ResourceRequest, query: URLSearchParams, accept?: string): KubeObject {
    const type = metricsTypeFor(info.group, info.version, info.resource);
    if (!type || info.subresource !== undefined) throw notFound(info.resource, info.group, info.name ?? '');
    if (info.verb !== 'get' && info.verb !== 'list') throw methodNotAllowed();
    const shape = negotiate(accept);
    const now = this.d.now();
    const rows = info.resource === 'nodes' ? this.nodes(info, query, now) : this.pods(info, query, now);
    if (shape === 'table') return metricsTable(rows, includeObjectParam(query));
    if (info.name !== undefined) return rows[0]!.object;
    // Items of a typed list carry no kind or apiVersion, as metrics-server's.
    const items = rows.map(({ object: { kind: _k, apiVersion: _a, ...rest } }) => rest);
    return { apiVersion: API_VERSION, kind: type.kind === 'NodeMetrics' ? 'NodeMetricsList' : 'PodMetricsList', metadata: {}, items } as KubeObject;
  }

  private selectors(query: URLSearchParams): (o: KubeObject) => boolean {
    const labels = parseLabelSelector(query.get('labelSelector') ?? '');
    const fields = parseFieldSelector(query.get('fieldSelector') ?? '', {});
    return (o) => labels.matches(o.metadata.labels) && fields.matches(o);
  }

  private nodes(info: ResourceRequest, query: URLSearchParams, now: number): MetricsRow[] {
    if (info.name !== undefined) {
      const node = this.d.node(info.name);
      if (!node) throw notFound('nodes', '', info.name);
      const m = this.nodeMetrics(node, now, () => this.d.pods(undefined).filter((p) => p.spec?.nodeName === info.name));
      if (!m) throw notFound('nodemetrics', METRICS_GROUP, info.name);
      return [m];
    }
    const selected = this.selectors(query);
    const items: MetricsRow[] = [];
    // A simulated node's figures are its pods': gathered by node once, when the first one asks.
    let byNode: Map<string, Pod[]> | undefined;
    const podsOn = (name: string): Pod[] => {
      if (!byNode) {
        byNode = new Map();
        for (const p of this.d.pods(undefined)) {
          const n = p.spec?.nodeName;
          if (!n) continue;
          const list = byNode.get(n);
          if (list) list.push(p);
          else byNode.set(n, [p]);
        }
      }
      return byNode.get(name) ?? [];
    };
    const created = rfc3339(now);
    for (const node of this.d.nodes().filter(selected).sort(byName)) {
      const m = this.nodeMetrics(node, now, () => podsOn(node.metadata.name!), created);
      if (m) items.push(m);
    }
    return items;
  }

  private nodeMetrics(node: KubeObject, now: number, podsOn: () => Pod[], created = rfc3339(now)): MetricsRow | undefined {
    const rate = this.d.simulated(node) ? simulatedNodeRate(podsOn(), now, this.d.resolutionMs) : this.d.storage.nodeRate(node.metadata.name!);
    if (!rate) return undefined;
    const window = goDuration(rate.windowMs);
    const object = { apiVersion: API_VERSION, kind: 'NodeMetrics', metadata: metadata(node, created), timestamp: rfc3339(rate.timestampMs), window, usage: usage(rate) } as KubeObject;
    return { object, rates: [rate], window };
  }

  private pods(info: ResourceRequest, query: URLSearchParams, now: number): MetricsRow[] {
    if (info.name !== undefined) {
      if (info.namespace === undefined) throw badRequest('a pod\'s metrics are read in its namespace');
      const pod = this.d.pod(info.namespace, info.name);
      if (!pod) throw notFound('pods', '', `${info.namespace}/${info.name}`);
      const m = this.podMetrics(pod, now, new Map());
      if (!m) throw notFound('podmetrics', METRICS_GROUP, `${info.namespace}/${info.name}`);
      return [m];
    }
    const selected = this.selectors(query);
    const items: MetricsRow[] = [];
    const simulatedNodes = new Map<string, boolean>();
    const created = rfc3339(now);
    for (const pod of this.d.pods(info.namespace).filter(selected).sort(byNamespaceAndName)) {
      const m = this.podMetrics(pod, now, simulatedNodes, created);
      if (m) items.push(m);
    }
    return items;
  }

  private podMetrics(pod: Pod, now: number, simulatedNodes: Map<string, boolean>, created = rfc3339(now)): MetricsRow | undefined {
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) return undefined;
    let simulated = simulatedNodes.get(nodeName);
    if (simulated === undefined) {
      const node = this.d.node(nodeName);
      simulated = node !== undefined && this.d.simulated(node);
      simulatedNodes.set(nodeName, simulated);
    }
    const rates = simulated ? simulatedPodRates(pod, now, this.d.resolutionMs) : this.d.storage.podRates(pod.metadata.namespace ?? 'default', pod.metadata.name!);
    if (!rates) return undefined;
    // The pod's window is its latest container's.
    const latest = rates.reduce((a, b) => (b.rate.timestampMs > a.rate.timestampMs ? b : a)).rate;
    const window = goDuration(latest.windowMs);
    const object = {
      apiVersion: API_VERSION,
      kind: 'PodMetrics',
      metadata: metadata(pod, created),
      timestamp: rfc3339(latest.timestampMs),
      window,
      containers: rates.map(({ container, rate }) => ({ name: container, usage: usage(rate) })),
    } as KubeObject;
    return { object, rates: rates.map((r) => r.rate), window };
  }
}

function byName(a: KubeObject, b: KubeObject): number {
  return a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0;
}

function byNamespaceAndName(a: KubeObject, b: KubeObject): number {
  const ka = `${a.metadata.namespace}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
