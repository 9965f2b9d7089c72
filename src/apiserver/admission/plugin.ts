// Admission as upstream's apiserver runs it: a list of plugins, each deciding for itself which
// writes it handles, run in a fixed order in two stages around the kind's own validation.
//   mutate:   after defaulting, before the kind's validation; may change the object or refuse it
//             (upstream's MutationInterface; a refusal here comes before any 422, as upstream's).
//   validate: after the kind's validation, before storage; may refuse, never changes anything.
// A new rule is a new plugin in its own file, listed once in ./chain.ts's order.
import type { ResourceType } from '../../api/resource.js';
import type { KubeObject } from '../../api/types.js';
import type { UserInfo } from '../request-context.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

/** What one write is (upstream's admission.Attributes). */
export interface AdmissionAttributes {
  operation: Operation;
  /** The type written: a plugin never looks it up again. */
  resource: ResourceType;
  /** '' for the main resource, else 'status', 'scale', 'binding'… */
  subresource: string;
  namespace: string | undefined;
  name: string;
  /** The object as it will be stored (CREATE, UPDATE); a plugin's mutate may change it. */
  object: KubeObject | undefined;
  /** The stored object (UPDATE, DELETE). */
  oldObject: KubeObject | undefined;
  user: UserInfo;
  dryRun: boolean;
  /** The write's field manager (what a webhook sees in the request's options). */
  fieldManager?: string;
  /** Adds a `Warning:` header to the answer (once per text); absent where no one reads the answer. */
  warn?(text: string): void;
  /** Set by a plugin that needs the mutating stage run once more (reinvocation), read by the chain. */
  reinvocation?: ReinvocationContext;
}

/**
 * Upstream's reinvocation: a mutating webhook with reinvocationPolicy IfNeeded is called again when
 * something after it changed the object. The chain then runs the whole mutating stage a second
 * time (the built-in plugins are idempotent), once; each plugin keeps its own state under its name.
 */
export class ReinvocationContext {
  /** True during the second run. */
  isReinvoke = false;
  /** A plugin asks for the second run. */
  shouldReinvoke = false;
  private readonly values = new Map<string, unknown>();
  value<T>(plugin: string, make: () => T): T {
    let v = this.values.get(plugin) as T | undefined;
    if (v === undefined) this.values.set(plugin, (v = make()));
    return v;
  }
}

export interface AdmissionPlugin {
  /** Upstream's plugin name (`--enable-admission-plugins` spelling). */
  readonly name: string;
  /**
   * Whether the plugin may act on this operation of this type. Asked once per type and operation
   * and remembered, so a write no plugin handles runs no plugin code. (The webhook plugins handle
   * every type but admissionregistration's: a write no webhook's rules match costs them a
   * synchronous rule check.)
   */
  handles(operation: Operation, resource: ResourceType): boolean;
  mutate?(a: AdmissionAttributes): void | Promise<void>;
  validate?(a: AdmissionAttributes): void | Promise<void>;
}

type Stage = 'mutate' | 'validate';

/**
 * Runs the plugins of one stage in order. Returns undefined at once when no plugin of the stage
 * handles the write, and a promise only when a plugin's step is asynchronous, so synchronous
 * admission stays synchronous for the caller that wants it.
 */
export class AdmissionChain {
  private readonly byType = new WeakMap<ResourceType, Map<string, readonly AdmissionPlugin[]>>();

  constructor(readonly plugins: readonly AdmissionPlugin[]) {}

  /** Whether any plugin acts on this operation of this type, in either stage. */
  admits(operation: Operation, resource: ResourceType): boolean {
    return this.pluginsFor('mutate', operation, resource).length > 0 || this.pluginsFor('validate', operation, resource).length > 0;
  }

  mutate(a: AdmissionAttributes): void | Promise<void> {
    const result = this.run('mutate', a);
    if (result instanceof Promise) return result.then(() => this.reinvoke(a));
    return this.reinvoke(a);
  }

  /** The second run of the mutating stage a plugin asked for (upstream's reinvoker), at most once. */
  private reinvoke(a: AdmissionAttributes): void | Promise<void> {
    const r = a.reinvocation;
    if (!r || !r.shouldReinvoke || r.isReinvoke) return undefined;
    r.isReinvoke = true;
    return this.run('mutate', a);
  }

  validate(a: AdmissionAttributes): void | Promise<void> {
    return this.run('validate', a);
  }

  /** The plugins that run for a stage of an operation on a type, in order. */
  pluginsFor(stage: Stage, operation: Operation, resource: ResourceType): readonly AdmissionPlugin[] {
    let forType = this.byType.get(resource);
    if (!forType) this.byType.set(resource, (forType = new Map()));
    const key = `${stage}/${operation}`;
    let list = forType.get(key);
    if (!list) {
      list = this.plugins.filter((p) => p[stage] !== undefined && p.handles(operation, resource));
      forType.set(key, list);
    }
    return list;
  }

  private run(stage: Stage, a: AdmissionAttributes): void | Promise<void> {
    const list = this.pluginsFor(stage, a.operation, a.resource);
    for (let i = 0; i < list.length; i++) {
      const result = list[i]![stage]!(a);
      if (result instanceof Promise) return result.then(() => this.runFrom(stage, list, i + 1, a));
    }
    return undefined;
  }

  private async runFrom(stage: Stage, list: readonly AdmissionPlugin[], start: number, a: AdmissionAttributes): Promise<void> {
    for (let i = start; i < list.length; i++) await list[i]![stage]!(a);
  }
}

/** No admission at all (storage under test). */
export const NO_ADMISSION = new AdmissionChain([]);

/** Whether a resource is the core group's `resource` (most built-in plugins look at one kind). */
export function isCore(rt: ResourceType, resource: string): boolean {
  return rt.group === '' && rt.resource === resource;
}
