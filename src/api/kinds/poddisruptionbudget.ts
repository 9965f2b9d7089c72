// policy/v1 PodDisruptionBudget (evictions through pods/eviction honour it).
import { field } from '../errors.js';
import { type LabelSelectorObject, validateLabelSelectorObject } from '../labels.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { invalidRendered, isNotMoreThan100Percent, nameIsDNSSubdomain, validateMeta, validatePositiveIntOrPercent } from '../validation.js';
import { num, obj, str } from './json.js';
import { age, column, intOrStringText, nameColumn } from './printing.js';

export interface PodDisruptionBudgetSpec {
  minAvailable?: number | string;
  maxUnavailable?: number | string;
  /** In policy/v1 an empty selector matches every pod of the namespace. */
  selector?: LabelSelectorObject;
  unhealthyPodEvictionPolicy?: 'IfHealthyBudget' | 'AlwaysAllow';
}

export interface PodDisruptionBudgetStatus {
  observedGeneration?: number;
  disruptedPods?: Record<string, string>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string; observedGeneration?: number }[];
}

export interface PodDisruptionBudget extends KubeObject {
  metadata: ObjectMeta;
  spec?: PodDisruptionBudgetSpec;
  status?: PodDisruptionBudgetStatus;
}

const EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];

function isSet(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function validatePDB(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  if (isSet(spec.minAvailable) && isSet(spec.maxUnavailable)) {
    out.push(invalidRendered('spec', JSON.stringify(spec), 'minAvailable and maxUnavailable cannot be both set'));
  }
  for (const f of ['minAvailable', 'maxUnavailable']) {
    if (!isSet(spec[f])) continue;
    out.push(...validatePositiveIntOrPercent(spec[f], `spec.${f}`));
    out.push(...isNotMoreThan100Percent(spec[f], `spec.${f}`));
  }
  out.push(...validateLabelSelectorObject(spec.selector, 'spec.selector'));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (isSet(policy) && !EVICTION_POLICIES.includes(str(policy))) {
    out.push(field.notSupported('spec.unhealthyPodEvictionPolicy', policy, EVICTION_POLICIES));
  }
  return out;
}

export const podDisruptionBudgetResource: ResourceType = {
  group: 'policy',
  version: 'v1',
  resource: 'poddisruptionbudgets',
  kind: 'PodDisruptionBudget',
  listKind: 'PodDisruptionBudgetList',
  singular: 'poddisruptionbudget',
  namespaced: true,
  shortNames: ['pdb'],
  categories: [],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Min Available', 'string', 'Pods that must stay available.'),
      column('Max Unavailable', 'string', 'Pods that may be unavailable.'),
      column('Allowed Disruptions', 'integer', 'Pods that may be disrupted right now.'),
      column('Age', 'string', 'Time since the object was created.'),
    ],
    cells(o, now) {
      const spec = obj(o.spec);
      return [
        o.metadata?.name ?? '',
        isSet(spec.minAvailable) ? intOrStringText(spec.minAvailable) : 'N/A',
        isSet(spec.maxUnavailable) ? intOrStringText(spec.maxUnavailable) : 'N/A',
        num(obj(o.status).disruptionsAllowed),
        age(o, now),
      ];
    },
  },
  hasGeneration: true,
  defaults: () => {},
  validate: validatePDB,
  prepareForCreate: (o) => {
    o.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  },
};
