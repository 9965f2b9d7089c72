// How far an HPA may move from its current size: upstream's stabilization windows (the history of
// recommendations per HPA) and scaling policies (the history of scale events per HPA), with the
// AbleToScale and ScalingLimited conditions they explain themselves with. Without spec.behavior the
// older rules apply: a 5-minute downscale window and at most max(2 × current, 4) on the way up.
import type { HorizontalPodAutoscalerBehavior, HPAScalingRules } from '../api/kinds/horizontalpodautoscaler.js';
import { defaultScaleDownRules, defaultScaleUpRules } from '../api/kinds/horizontalpodautoscaler.js';

export interface ConditionUpdate {
  type: 'AbleToScale' | 'ScalingLimited';
  status: 'True' | 'False';
  reason: string;
  message: string;
}

interface Recommendation {
  replicas: number;
  at: number;
}

interface ScaleEvent {
  change: number;
  at: number;
  outdated: boolean;
}

export interface NormalizeArgs {
  key: string;
  behavior: HorizontalPodAutoscalerBehavior | undefined;
  minReplicas: number;
  maxReplicas: number;
  currentReplicas: number;
  desiredReplicas: number;
}

/** --horizontal-pod-autoscaler-downscale-stabilization: 5 min. */
export const DEFAULT_DOWNSCALE_STABILIZATION_MS = 5 * 60_000;
const SCALE_UP_LIMIT_FACTOR = 2;
const SCALE_UP_LIMIT_MINIMUM = 4;

const WITHIN_RANGE = { reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };

export class ScalingRules {
  private readonly recommendations = new Map<string, Recommendation[]>();
  private readonly scaleUpEvents = new Map<string, ScaleEvent[]>();
  private readonly scaleDownEvents = new Map<string, ScaleEvent[]>();

  constructor(
    private readonly now: () => number,
    private readonly downscaleStabilizationMs = DEFAULT_DOWNSCALE_STABILIZATION_MS,
  ) {}

  /** An HPA seen for the first time: its target's size counts as the first recommendation. */
  recordInitialRecommendation(key: string, currentReplicas: number): void {
    if (!this.recommendations.has(key)) this.recommendations.set(key, [{ replicas: currentReplicas, at: this.now() }]);
  }

  /** An HPA gone: its history goes too. */
  forget(key: string): void {
    this.recommendations.delete(key);
    this.scaleUpEvents.delete(key);
    this.scaleDownEvents.delete(key);
  }

  /** The size to scale to, and the conditions that say why. */
  normalize(args: NormalizeArgs): { replicas: number; conditions: ConditionUpdate[] } {
    return args.behavior ? this.withBehavior(args, args.behavior) : this.withoutBehavior(args);
  }

  /** Remembers a rescale for the policies' periods (only HPAs with behavior use them). */
  recordScaleEvent(key: string, behavior: HorizontalPodAutoscalerBehavior | undefined, previous: number, next: number): void {
    if (!behavior) return;
    const up = next > previous;
    const rules = up ? scaleUpRules(behavior) : scaleDownRules(behavior, this.downscaleStabilizationMs);
    const map = up ? this.scaleUpEvents : this.scaleDownEvents;
    const events = map.get(key) ?? [];
    const longest = Math.max(0, ...(rules.policies ?? []).map((p) => p.periodSeconds)) * 1000;
    const now = this.now();
    for (const e of events) if (e.at < now - longest) e.outdated = true;
    const fresh: ScaleEvent = { change: Math.abs(next - previous), at: now, outdated: false };
    // The last outdated slot is reused, as upstream's, so the list stays as long as the busiest period.
    let slot = -1;
    events.forEach((e, i) => {
      if (e.outdated) slot = i;
    });
    if (slot >= 0) events[slot] = fresh;
    else events.push(fresh);
    map.set(key, events);
  }

  private withoutBehavior(args: NormalizeArgs): { replicas: number; conditions: ConditionUpdate[] } {
    const stabilized = this.stabilize(args.key, args.desiredReplicas);
    const conditions: ConditionUpdate[] = [
      stabilized !== args.desiredReplicas
        ? { type: 'AbleToScale', status: 'True', reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' }
        : { type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' },
    ];
    const scaleUpLimit = Math.max(SCALE_UP_LIMIT_FACTOR * args.currentReplicas, SCALE_UP_LIMIT_MINIMUM);
    let maximum: number;
    let limit: { reason: string; message: string };
    if (args.maxReplicas > scaleUpLimit) {
      maximum = scaleUpLimit;
      limit = { reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' };
    } else {
      maximum = args.maxReplicas;
      limit = { reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' };
    }
    let replicas = stabilized;
    let why = WITHIN_RANGE;
    if (stabilized < args.minReplicas) {
      replicas = args.minReplicas;
      why = { reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
    } else if (stabilized > maximum) {
      replicas = maximum;
      why = limit;
    }
    conditions.push({ type: 'ScalingLimited', status: replicas === stabilized ? 'False' : 'True', ...why });
    return { replicas, conditions };
  }

  /** Upstream's stabilizeRecommendation: the highest recommendation of the downscale window. */
  private stabilize(key: string, desired: number): number {
    const now = this.now();
    const cutoff = now - this.downscaleStabilizationMs;
    const history = this.recommendations.get(key) ?? [];
    let max = desired;
    let old = -1;
    history.forEach((r, i) => {
      if (r.at < cutoff) old = i;
      else if (r.replicas > max) max = r.replicas;
    });
    const entry = { replicas: desired, at: now };
    if (old >= 0) history[old] = entry;
    else history.push(entry);
    this.recommendations.set(key, history);
    return max;
  }

  private withBehavior(args: NormalizeArgs, behavior: HorizontalPodAutoscalerBehavior): { replicas: number; conditions: ConditionUpdate[] } {
    const up = scaleUpRules(behavior);
    const down = scaleDownRules(behavior, this.downscaleStabilizationMs);
    const { recommendation, reason, message } = this.stabilizeWithBehavior(args, up, down);
    const conditions: ConditionUpdate[] = [
      recommendation !== args.desiredReplicas
        ? { type: 'AbleToScale', status: 'True', reason, message }
        : { type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' },
    ];
    const { replicas, why } = this.limitRate({ ...args, desiredReplicas: recommendation }, up, down);
    conditions.push({ type: 'ScalingLimited', status: replicas === recommendation ? 'False' : 'True', ...why });
    return { replicas, conditions };
  }

  /** Upstream's stabilizeRecommendationWithBehaviors: between the lowest of the up window and the highest of the down window. */
  private stabilizeWithBehavior(args: NormalizeArgs, up: HPAScalingRules, down: HPAScalingRules): { recommendation: number; reason: string; message: string } {
    const now = this.now();
    const upCutoff = now - (up.stabilizationWindowSeconds ?? 0) * 1000;
    const downCutoff = now - (down.stabilizationWindowSeconds ?? 0) * 1000;
    let upRecommendation = args.desiredReplicas;
    let downRecommendation = args.desiredReplicas;
    let old = -1;
    const history = this.recommendations.get(args.key) ?? [];
    history.forEach((r, i) => {
      if (r.at > upCutoff) upRecommendation = Math.min(r.replicas, upRecommendation);
      if (r.at > downCutoff) downRecommendation = Math.max(r.replicas, downRecommendation);
      if (r.at < upCutoff && r.at < downCutoff) old = i;
    });
    let recommendation = args.currentReplicas;
    if (recommendation < upRecommendation) recommendation = upRecommendation;
    if (recommendation > downRecommendation) recommendation = downRecommendation;
    const entry = { replicas: args.desiredReplicas, at: now };
    if (old >= 0) history[old] = entry;
    else history.push(entry);
    this.recommendations.set(args.key, history);
    return args.desiredReplicas >= args.currentReplicas
      ? { recommendation, reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' }
      : { recommendation, reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' };
  }

  /** Upstream's convertDesiredReplicasWithBehaviorRate: the policies' limit for the direction of change. */
  private limitRate(args: NormalizeArgs, up: HPAScalingRules, down: HPAScalingRules): { replicas: number; why: { reason: string; message: string } } {
    const { currentReplicas: current, desiredReplicas: desired } = args;
    if (desired > current) {
      const limit = Math.max(current, this.scaleUpLimit(args.key, current, up));
      const tooFast = args.maxReplicas > limit;
      const maximum = tooFast ? limit : args.maxReplicas;
      if (desired > maximum) {
        return {
          replicas: maximum,
          why: tooFast
            ? { reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' }
            : { reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' },
        };
      }
    } else if (desired < current) {
      const limit = Math.min(current, this.scaleDownLimit(args.key, current, down));
      const tooFast = args.minReplicas < limit;
      const minimum = tooFast ? limit : args.minReplicas;
      if (desired < minimum) {
        return {
          replicas: minimum,
          why: tooFast
            ? { reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' }
            : { reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' },
        };
      }
    }
    return { replicas: desired, why: WITHIN_RANGE };
  }

  private changeInPeriod(events: readonly ScaleEvent[] | undefined, periodSeconds: number): number {
    const cutoff = this.now() - periodSeconds * 1000;
    return (events ?? []).reduce((sum, e) => (e.at > cutoff ? sum + e.change : sum), 0);
  }

  private scaleUpLimit(key: string, current: number, rules: HPAScalingRules): number {
    if (rules.selectPolicy === 'Disabled') return current;
    const pick = rules.selectPolicy === 'Min' ? Math.min : Math.max;
    let result = rules.selectPolicy === 'Min' ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
    for (const p of rules.policies ?? []) {
      const start = current - this.changeInPeriod(this.scaleUpEvents.get(key), p.periodSeconds);
      const proposed = p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100));
      result = pick(result, proposed);
    }
    return result;
  }

  private scaleDownLimit(key: string, current: number, rules: HPAScalingRules): number {
    if (rules.selectPolicy === 'Disabled') return current;
    // Min picks the policy allowing the smallest change, so the highest floor.
    const pick = rules.selectPolicy === 'Min' ? Math.max : Math.min;
    let result = rules.selectPolicy === 'Min' ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
    for (const p of rules.policies ?? []) {
      const start = current + this.changeInPeriod(this.scaleDownEvents.get(key), p.periodSeconds);
      const proposed = p.type === 'Pods' ? start - p.value : Math.trunc(start * (1 - p.value / 100));
      result = pick(result, proposed);
    }
    return result;
  }
}

/** The scale-up rules in force (the object's, defaulted on write; the defaults for one written otherwise). */
function scaleUpRules(behavior: HorizontalPodAutoscalerBehavior): HPAScalingRules {
  return { ...defaultScaleUpRules(), ...stripUnset(behavior.scaleUp) };
}

/** The scale-down rules in force; an unset window is the controller's downscale stabilization. */
function scaleDownRules(behavior: HorizontalPodAutoscalerBehavior, downscaleStabilizationMs: number): HPAScalingRules {
  return { stabilizationWindowSeconds: Math.round(downscaleStabilizationMs / 1000), ...defaultScaleDownRules(), ...stripUnset(behavior.scaleDown) };
}

function stripUnset(rules: HPAScalingRules | undefined): Partial<HPAScalingRules> {
  const out: Partial<HPAScalingRules> = {};
  if (!rules) return out;
  if (rules.stabilizationWindowSeconds !== undefined && rules.stabilizationWindowSeconds !== null) out.stabilizationWindowSeconds = rules.stabilizationWindowSeconds;
  if (rules.selectPolicy !== undefined && rules.selectPolicy !== null) out.selectPolicy = rules.selectPolicy;
  if (Array.isArray(rules.policies)) out.policies = rules.policies;
  return out;
}
