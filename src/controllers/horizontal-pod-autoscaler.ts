// HorizontalPodAutoscaler controller (upstream pkg/controller/podautoscaler/horizontal.go): every
// 15 s (--horizontal-pod-autoscaler-sync-period) each HPA reads its target's scale subresource and
// its pods' resource metrics from metrics.k8s.io/v1beta1 through the API (skiff's own or a real
// metrics-server behind an APIService), computes the replica count per metric, takes the largest,
// bounds it by the stabilization windows, scaling policies and min/max, and writes the scale. Its
// status carries currentMetrics, currentReplicas, desiredReplicas, lastScaleTime and the
// AbleToScale, ScalingActive and ScalingLimited conditions with upstream's reasons and messages;
// Events say what happened (SuccessfulRescale, FailedGetResourceMetric, FailedGetScale, ...).
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../api/errors.js';
import type { HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition, MetricSpec, MetricStatus } from '../api/kinds/horizontalpodautoscaler.js';
import { deepClone, isObject, semanticEqual } from '../api/kinds/json.js';
import type { Pod } from '../api/kinds/pod.js';
import { parseLabelSelector, type LabelSelector } from '../api/labels.js';
import { parseDuration } from '../util/duration.js';
import { canonicalQuantity, milliValue } from '../api/quantity.js';
import { resourceTypeForKind } from '../api/registry.js';
import { parseApiVersion, type KubeObject } from '../api/types.js';
import type { ApiClient } from '../client/rest.js';
import { objectKeyOf, type Informer } from '../client/informer.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';
import { errorText } from '../util/error-text.js';
import { rfc3339 } from '../util/time.js';
import {
  DEFAULT_REPLICA_CALCULATOR_OPTIONS,
  MetricComputeError,
  rawResourceReplicas,
  resourceReplicas,
  type PodMetrics,
  type ReplicaCalculatorOptions,
} from './hpa-replica-calculator.js';
import { DEFAULT_DOWNSCALE_STABILIZATION_MS, ScalingRules, type ConditionUpdate } from './hpa-scaling-rules.js';
import { conflictsRequeue, objectPath } from './pod-control.js';

/** --horizontal-pod-autoscaler-sync-period. */
export const DEFAULT_HPA_SYNC_PERIOD_MS = 15_000;
const HPA_PREFIX = '/apis/autoscaling/v2';
const METRICS_PREFIX = '/apis/metrics.k8s.io/v1beta1';

export interface HorizontalPodAutoscalerOptions extends ReplicaCalculatorOptions {
  syncPeriodMs: number;
  downscaleStabilizationMs: number;
}

export const DEFAULT_HPA_OPTIONS: HorizontalPodAutoscalerOptions = {
  ...DEFAULT_REPLICA_CALCULATOR_OPTIONS,
  syncPeriodMs: DEFAULT_HPA_SYNC_PERIOD_MS,
  downscaleStabilizationMs: DEFAULT_DOWNSCALE_STABILIZATION_MS,
};

interface Scale extends KubeObject {
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

/** Pods' usage of one resource, as the resource metrics API reports it. */
export interface ResourceMetricsReader {
  podMetrics(namespace: string, selector: string, resource: string, container: string | undefined, signal: AbortSignal): Promise<{ metrics: PodMetrics; timestamp: number }>;
}

/** A PodMetrics window (Go's time.Duration text, "1m0s") in milliseconds; 0 when unreadable. */
function windowMs(text: unknown): number {
  try {
    return typeof text === 'string' ? parseDuration(text) : 0;
  } catch {
    return 0;
  }
}

/** Reads metrics.k8s.io/v1beta1 PodMetrics through the API, as upstream's resource metrics client. */
export class ApiResourceMetrics implements ResourceMetricsReader {
  constructor(private readonly client: ApiClient) {}

  async podMetrics(namespace: string, selector: string, resource: string, container: string | undefined, signal: AbortSignal): Promise<{ metrics: PodMetrics; timestamp: number }> {
    let list: { items?: KubeObject[] };
    try {
      list = await this.client.list(`${METRICS_PREFIX}/namespaces/${namespace}/pods`, { labelSelector: selector }, signal);
    } catch (e) {
      throw new MetricComputeError(`unable to fetch metrics from resource metrics API: ${clientErrorText(e, 'get pods.metrics.k8s.io')}`);
    }
    const items = list.items ?? [];
    if (items.length === 0) throw new MetricComputeError('no metrics returned from resource metrics API');
    const metrics: PodMetrics = new Map();
    for (const item of items) {
      let sum = 0;
      let missing = false;
      let found = false;
      for (const c of Array.isArray(item.containers) ? item.containers : []) {
        if (!isObject(c)) continue;
        if (container && c.name !== container) continue;
        found = true;
        const usage = isObject(c.usage) ? c.usage[resource] : undefined;
        if (typeof usage !== 'string' && typeof usage !== 'number') {
          missing = true;
          break;
        }
        sum += milliValue(usage);
      }
      if (missing || (container && !found)) continue;
      metrics.set(item.metadata.name!, { timestamp: Date.parse(String(item.timestamp ?? '')) || 0, windowMs: windowMs(item.window), value: sum });
    }
    return { metrics, timestamp: Date.parse(String(items[0]!.timestamp ?? '')) || 0 };
  }
}

/** client-go's text for an API error: a bare 404 or 503 names the request, as its generic server responses do. */
function clientErrorText(e: unknown, request: string): string {
  if (isStatusError(e)) {
    const generic = ['the server could not find the requested resource', 'the server is currently unable to handle the request'];
    return generic.includes(e.message) ? `${e.message} (${request})` : e.message;
  }
  return errorText(e);
}

export class HorizontalPodAutoscalerController implements Controller {
  readonly name = 'horizontal-pod-autoscaler';

  /** `opts`: the controller's settings; unset, they come from the server's flags (ControllerOptions). */
  constructor(
    private readonly opts?: HorizontalPodAutoscalerOptions,
    private readonly metrics?: (client: ApiClient) => ResourceMetricsReader,
  ) {}

  start(ctx: ControllerContext, signal: AbortSignal): void {
    setMaxListeners(0, signal);
    const o = ctx.options;
    const opts: HorizontalPodAutoscalerOptions = this.opts ?? {
      syncPeriodMs: o.hpaSyncPeriodMs ?? DEFAULT_HPA_OPTIONS.syncPeriodMs,
      downscaleStabilizationMs: o.hpaDownscaleStabilizationMs ?? DEFAULT_HPA_OPTIONS.downscaleStabilizationMs,
      tolerance: o.hpaTolerance ?? DEFAULT_HPA_OPTIONS.tolerance,
      cpuInitializationPeriodMs: o.hpaCpuInitializationPeriodMs ?? DEFAULT_HPA_OPTIONS.cpuInitializationPeriodMs,
      delayOfInitialReadinessStatusMs: o.hpaInitialReadinessDelayMs ?? DEFAULT_HPA_OPTIONS.delayOfInitialReadinessStatusMs,
    };
    const hpas = ctx.informers.for<HorizontalPodAutoscaler>(PATHS.horizontalpodautoscalers);
    const pods = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    const reader = this.metrics ? this.metrics(ctx.client) : new ApiResourceMetrics(ctx.client);
    const reconciler = new HorizontalPodAutoscalerReconciler(ctx, hpas, pods, reader, opts);
    const loop = new ReconcileLoop(reconciler, { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    const enqueue = (o: HorizontalPodAutoscaler) => loop.enqueue(objectKeyOf(o));
    hpas.addHandlers({ add: enqueue, update: (old, o) => (semanticEqual(old.spec, o.spec) ? undefined : enqueue(o)), delete: enqueue });
    void Promise.all([hpas.waitForSync(), pods.waitForSync()]).then(() => loop.run(signal));
  }
}

/** One HPA's pass; the conditions it sets, in the order they are first set (as upstream's status shows them). */
class Pass {
  readonly conditions: HorizontalPodAutoscalerCondition[];
  constructor(
    private readonly now: string,
    existing: readonly HorizontalPodAutoscalerCondition[] | undefined,
  ) {
    this.conditions = deepClone([...(existing ?? [])]);
  }

  set(type: string, status: 'True' | 'False', reason: string, message: string): void {
    const c = this.conditions.find((x) => x.type === type);
    if (!c) {
      this.conditions.push({ type, status, lastTransitionTime: this.now, reason, message });
      return;
    }
    if (c.status !== status) c.lastTransitionTime = this.now;
    c.status = status;
    c.reason = reason;
    c.message = message;
  }

  apply(updates: readonly ConditionUpdate[]): void {
    for (const u of updates) this.set(u.type, u.status, u.reason, u.message);
  }
}

interface MetricResult {
  replicas: number;
  name: string;
  status: MetricStatus;
}

class MetricError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

export class HorizontalPodAutoscalerReconciler implements Reconciler {
  readonly name = 'horizontal-pod-autoscaler';
  private readonly recorder: EventRecorder;
  private readonly rules: ScalingRules;
  /** Kinds of scale targets found through discovery (custom resources), by apiVersion/kind. */
  private readonly discovered = new Map<string, string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly hpas: Informer<HorizontalPodAutoscaler>,
    private readonly pods: Informer<Pod>,
    private readonly reader: ResourceMetricsReader,
    private readonly opts: HorizontalPodAutoscalerOptions,
  ) {
    this.recorder = ctx.recorder('horizontal-pod-autoscaler');
    this.rules = new ScalingRules(() => ctx.clock.now(), opts.downscaleStabilizationMs);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const hpa = this.hpas.get(key);
    if (!hpa || hpa.metadata.deletionTimestamp) {
      this.rules.forget(key);
      return;
    }
    const result = await conflictsRequeue(signal, () => this.sync(key, hpa, signal));
    // Every HPA is looked at again each sync period, whatever happened (an error too).
    return result ?? { requeueAfterMs: this.opts.syncPeriodMs };
  }

  private async sync(key: string, hpa: HorizontalPodAutoscaler, signal: AbortSignal): Promise<ReconcileResult | void> {
    const now = this.ctx.clock.now();
    const pass = new Pass(rfc3339(now), hpa.status?.conditions);
    const ns = hpa.metadata.namespace!;
    const spec = hpa.spec;
    const ref = spec.scaleTargetRef;
    const reference = `${ref.kind}/${ns}/${ref.name}`;
    const statusBefore = hpa.status ?? { desiredReplicas: 0 };
    let status = { ...statusBefore };
    const finish = async (): Promise<ReconcileResult> => {
      status.conditions = pass.conditions;
      await this.writeStatus(hpa, status, signal);
      return { requeueAfterMs: this.opts.syncPeriodMs };
    };

    let scalePath: string;
    let scale: Scale;
    try {
      scalePath = `${await this.targetPath(ref.apiVersion ?? '', ref.kind, ns, ref.name, signal)}/scale`;
      scale = await this.ctx.client.get<Scale>(scalePath, { signal });
    } catch (e) {
      const text = errorText(e);
      this.recorder.event(hpa, 'Warning', 'FailedGetScale', text);
      pass.set('AbleToScale', 'False', 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${text}`);
      return finish();
    }
    pass.set('AbleToScale', 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale");
    const currentReplicas = scale.spec?.replicas ?? 0;
    this.rules.recordInitialRecommendation(key, currentReplicas);
    const minReplicas = spec.minReplicas ?? 1;
    let desired = 0;
    let reason = '';
    let rescale = true;
    let metricStatuses: MetricStatus[] | undefined;
    if (currentReplicas === 0 && minReplicas !== 0) {
      rescale = false;
      pass.set('ScalingActive', 'False', 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero');
    } else if (currentReplicas > spec.maxReplicas) {
      reason = 'Current number of replicas above Spec.MaxReplicas';
      desired = spec.maxReplicas;
    } else if (currentReplicas < minReplicas) {
      reason = 'Current number of replicas below Spec.MinReplicas';
      desired = minReplicas;
    } else {
      const computed = await this.computeReplicasForMetrics(hpa, scale, currentReplicas, pass, signal);
      metricStatuses = computed.statuses;
      if (computed.replicas === -1) {
        status = withCurrent(status, currentReplicas, metricStatuses);
        this.recorder.event(hpa, 'Warning', 'FailedComputeMetricsReplicas', computed.error ?? '');
        return finish();
      }
      desired = computed.replicas;
      if (desired > currentReplicas) reason = `${computed.metric} above target`;
      if (desired < currentReplicas) reason = 'All metrics below target';
      const normalized = this.rules.normalize({ key, behavior: spec.behavior, minReplicas, maxReplicas: spec.maxReplicas, currentReplicas, desiredReplicas: desired });
      pass.apply(normalized.conditions);
      desired = normalized.replicas;
      rescale = desired !== currentReplicas;
    }

    if (rescale) {
      try {
        await this.ctx.client.replace(scalePath, { ...scale, spec: { ...scale.spec, replicas: desired } }, { signal });
      } catch (e) {
        if (signal.aborted) throw e;
        const text = errorText(e);
        this.recorder.event(hpa, 'Warning', 'FailedRescale', `New size: ${desired}; reason: ${reason}; error: ${text}`);
        pass.set('AbleToScale', 'False', 'FailedUpdateScale', `the HPA controller was unable to update the target scale: ${text}`);
        status = withCurrent(status, currentReplicas, metricStatuses ?? status.currentMetrics);
        return finish();
      }
      pass.set('AbleToScale', 'True', 'SucceededRescale', `the HPA controller was able to update the target scale to ${desired}`);
      this.recorder.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`);
      this.ctx.log.info({ hpa: key, target: reference, from: currentReplicas, to: desired, reason }, 'rescaled');
      this.rules.recordScaleEvent(key, spec.behavior, currentReplicas, desired);
    } else {
      desired = currentReplicas;
    }
    status = {
      ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
      ...(rescale ? { lastScaleTime: rfc3339(now) } : status.lastScaleTime ? { lastScaleTime: status.lastScaleTime } : {}),
      ...(currentReplicas !== 0 ? { currentReplicas } : {}),
      desiredReplicas: desired,
      ...(metricStatuses && metricStatuses.length > 0 ? { currentMetrics: metricStatuses } : {}),
    };
    return finish();
  }

  /** Upstream's computeReplicasForMetrics: the largest proposal; -1 when too many metrics failed. */
  private async computeReplicasForMetrics(
    hpa: HorizontalPodAutoscaler,
    scale: Scale,
    currentReplicas: number,
    pass: Pass,
    signal: AbortSignal,
  ): Promise<{ replicas: number; metric: string; statuses: MetricStatus[]; error?: string }> {
    const specs = hpa.spec.metrics ?? [];
    const selectorText = scale.status?.selector ?? '';
    if (selectorText === '') {
      this.recorder.event(hpa, 'Warning', 'SelectorRequired', 'selector is required');
      pass.set('ScalingActive', 'False', 'InvalidSelector', "the HPA target's scale is missing a selector");
      return { replicas: -1, metric: '', statuses: [], error: 'selector is required' };
    }
    let selector: LabelSelector;
    try {
      selector = parseLabelSelector(selectorText);
    } catch (e) {
      const text = `couldn't convert selector into a corresponding internal selector object: ${errorText(e)}`;
      this.recorder.event(hpa, 'Warning', 'InvalidSelector', text);
      pass.set('ScalingActive', 'False', 'InvalidSelector', text);
      return { replicas: -1, metric: '', statuses: [], error: text };
    }
    const statuses: MetricStatus[] = specs.map(() => ({ type: '' }));
    let replicas = 0;
    let metric = '';
    let invalid = 0;
    let firstError: MetricError | undefined;
    // The target's pods, read from the cache once for all of this autoscaler's metrics.
    let pods: Pod[] | undefined;
    const ns = hpa.metadata.namespace!;
    const targetPods = () => (pods ??= this.pods.list().filter((p) => p.metadata.namespace === ns && selector.matches(p.metadata.labels ?? {})));
    for (const [i, spec] of specs.entries()) {
      try {
        const r = await this.computeReplicasForMetric(hpa, spec, selectorText, targetPods, currentReplicas, signal);
        statuses[i] = r.status;
        if (replicas === 0 || r.replicas > replicas) {
          replicas = r.replicas;
          metric = r.name;
        }
      } catch (e) {
        if (signal.aborted) throw e;
        if (!(e instanceof MetricError)) throw e;
        this.recorder.event(hpa, 'Warning', e.reason, e.message);
        if (!firstError) firstError = e;
        invalid++;
      }
    }
    if (firstError && (invalid >= specs.length || replicas < (scale.spec?.replicas ?? 0))) {
      pass.set('ScalingActive', 'False', firstError.reason, `the HPA was unable to compute the replica count: ${firstError.message}`);
      return { replicas: -1, metric: '', statuses, error: `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${firstError.message}` };
    }
    pass.set('ScalingActive', 'True', 'ValidMetricFound', `the HPA was able to successfully calculate a replica count from ${metric}`);
    return { replicas, metric, statuses };
  }

  private async computeReplicasForMetric(
    hpa: HorizontalPodAutoscaler,
    spec: MetricSpec,
    selectorText: string,
    targetPods: () => Pod[],
    currentReplicas: number,
    signal: AbortSignal,
  ): Promise<MetricResult> {
    const ns = hpa.metadata.namespace!;
    switch (spec.type) {
      case 'Resource':
      case 'ContainerResource': {
        const container = spec.type === 'ContainerResource' ? spec.containerResource?.container : undefined;
        const source = spec.type === 'Resource' ? spec.resource : spec.containerResource;
        const failure = spec.type === 'Resource' ? 'FailedGetResourceMetric' : 'FailedGetContainerResourceMetric';
        const resource = source?.name ?? '';
        const target = source?.target ?? { type: '' };
        const pods = targetPods();
        const now = this.ctx.clock.now();
        const read = async (): Promise<{ metrics: PodMetrics; timestamp: number }> => {
          try {
            return await this.reader.podMetrics(ns, selectorText, resource, container, signal);
          } catch (e) {
            if (e instanceof MetricComputeError) throw new MetricComputeError(`unable to get metrics for resource ${resource}: ${e.message}`);
            throw e;
          }
        };
        const named = (what: string): string => (container ? `${resource} ${what} of container ${container}` : `${resource} ${what}`);
        const wrap = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
          try {
            return await fn();
          } catch (e) {
            if (e instanceof MetricComputeError) throw new MetricError(`failed to get ${what}: ${e.message}`, failure);
            throw e;
          }
        };
        if (target.averageValue !== undefined && target.averageValue !== null) {
          const r = await wrap(`${resource} usage`, async () => {
            const { metrics, timestamp } = await read();
            return rawResourceReplicas(currentReplicas, milliValue(target.averageValue!), resource, pods, metrics, timestamp, now, this.opts);
          });
          const current = { averageValue: canonicalQuantity(BigInt(r.usage) * 1_000_000n, 'DecimalSI') };
          return { replicas: r.replicas, name: named('resource'), status: resourceStatus(spec.type, resource, container, current) };
        }
        if (target.averageUtilization === undefined || target.averageUtilization === null) {
          throw new MetricError('failed to get resource utilization: invalid resource metric source: neither an average utilization target nor an average value (usage) target was set', failure);
        }
        const r = await wrap(`${resource} utilization`, async () => {
          const { metrics, timestamp } = await read();
          return resourceReplicas(currentReplicas, target.averageUtilization!, resource, pods, metrics, timestamp, now, this.opts, container);
        });
        const current = { averageUtilization: r.utilization, averageValue: canonicalQuantity(BigInt(r.rawUtilization) * 1_000_000n, 'DecimalSI') };
        return { replicas: r.replicas, name: named('resource utilization (percentage of request)'), status: resourceStatus(spec.type, resource, container, current) };
      }
      case 'Pods':
        throw new MetricError(`unable to get metric ${spec.pods?.metric?.name ?? ''}: unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered`, 'FailedGetPodsMetric');
      case 'Object':
        throw new MetricError(`unable to get metric ${spec.object?.metric?.name ?? ''}: unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered`, 'FailedGetObjectMetric');
      case 'External':
        throw new MetricError(`unable to get external metric ${ns}/${spec.external?.metric?.name ?? ''}: unable to fetch metrics from external metrics API: no external metrics API (external.metrics.k8s.io) registered`, 'FailedGetExternalMetric');
      default:
        throw new MetricError(`unknown metric source type "${spec.type}"`, 'InvalidMetricSourceType');
    }
  }

  /** The REST path of the scale target: a built-in kind from the registry, a custom one from discovery. */
  private async targetPath(apiVersion: string, kind: string, ns: string, name: string, signal: AbortSignal): Promise<string> {
    const { group, version } = parseApiVersion(apiVersion);
    const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const builtin = resourceTypeForKind(group, version, kind);
    if (builtin) return objectPath(prefix, builtin.resource, ns, name);
    const known = this.discovered.get(`${apiVersion}/${kind}`);
    if (known) return objectPath(prefix, known, ns, name);
    const list = await this.ctx.client.get<{ resources?: { name: string; kind: string }[] }>(prefix, { signal });
    const found = (list.resources ?? []).find((r) => r.kind === kind && !r.name.includes('/'));
    if (!found) throw new Error(`unable to determine resource for scale target reference: no matches for kind "${kind}" in group "${group}"`);
    this.discovered.set(`${apiVersion}/${kind}`, found.name);
    return objectPath(prefix, found.name, ns, name);
  }

  /** Writes the status only when it changed (upstream's updateStatusIfNeeded). */
  private async writeStatus(hpa: HorizontalPodAutoscaler, status: NonNullable<HorizontalPodAutoscaler['status']>, signal: AbortSignal): Promise<void> {
    if (semanticEqual(status, hpa.status ?? {})) return;
    await this.ctx.client.replace(`${objectPath(HPA_PREFIX, 'horizontalpodautoscalers', hpa.metadata.namespace!, hpa.metadata.name!)}/status`, { ...hpa, status }, { signal });
  }
}

type HpaStatus = NonNullable<HorizontalPodAutoscaler['status']>;

/** Upstream's setCurrentReplicasAndMetricsInStatus, as v2's JSON writes it (a zero count and no metrics are left out). */
function withCurrent(status: HpaStatus, currentReplicas: number, metrics: MetricStatus[] | undefined): HpaStatus {
  const { currentReplicas: _replicas, currentMetrics: _metrics, ...rest } = status;
  return { ...rest, ...(currentReplicas !== 0 ? { currentReplicas } : {}), ...(metrics && metrics.length > 0 ? { currentMetrics: metrics } : {}) };
}

function resourceStatus(type: string, name: string, container: string | undefined, current: MetricStatus['resource'] extends infer R ? (R extends { current: infer C } ? C : never) : never): MetricStatus {
  return type === 'ContainerResource' ? { type, containerResource: { name, container: container ?? '', current } } : { type, resource: { name, current } };
}
