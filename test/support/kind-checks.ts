// What the kinds' unit tests share: a kind's causes as the lines kubectl prints, and an object
// as the server prepares it on create (before validation).
import type { ResourceType } from '../../src/api/resource.js';
import type { KubeObject, StatusCause } from '../../src/api/types.js';

/** `field: message`, one line per cause. */
export function lines(causes: StatusCause[]): string[] {
  return causes.map((c) => `${c.field}: ${c.message}`);
}

/** `o` defaulted and prepared as a create does, in place. */
export function make(rt: ResourceType, o: KubeObject): KubeObject {
  rt.defaults(o);
  rt.prepareForCreate?.(o);
  return o;
}
