// DefaultTolerationSeconds: every pod tolerates the not-ready and unreachable NoExecute taints for
// a while (300 s upstream) unless it says otherwise, so a short blip does not evict it.
import type { KubeObject } from '../../api/types.js';
import { isCore, type AdmissionPlugin } from './plugin.js';

export interface DefaultTolerationOptions {
  defaultNotReadyTolerationSeconds: number;
  defaultUnreachableTolerationSeconds: number;
}

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

export function addDefaultTolerations(pod: KubeObject, opts: DefaultTolerationOptions): void {
  const spec = (pod.spec ??= {}) as { tolerations?: Toleration[] };
  const tolerations = spec.tolerations ?? [];
  const covers = (key: string) =>
    tolerations.some((t) => (t.effect === 'NoExecute' || !t.effect) && ((t.operator === 'Exists' && !t.key) || t.key === key));
  const add: Toleration[] = [];
  if (!covers(NOT_READY)) add.push({ key: NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: opts.defaultNotReadyTolerationSeconds });
  if (!covers(UNREACHABLE)) add.push({ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: opts.defaultUnreachableTolerationSeconds });
  if (add.length > 0) spec.tolerations = [...tolerations, ...add];
}


export function defaultTolerationSeconds(opts: DefaultTolerationOptions): AdmissionPlugin {
  return {
    name: 'DefaultTolerationSeconds',
    handles: (op, rt) => op === 'CREATE' && isCore(rt, 'pods'),
    mutate: (a) => {
      if (a.subresource === '' && a.object) addDefaultTolerations(a.object, opts);
    },
  };
}
