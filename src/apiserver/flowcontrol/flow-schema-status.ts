// A FlowSchema's Dangling condition, as upstream's APF controller keeps it: whether the priority
// level it names exists (a schema whose level is missing takes no requests).
import type { Condition, FlowSchema } from '../../api/kinds/flowcontrol.js';
import { rfc3339 } from '../../util/time.js';

/** The conditions `fs` should have given the level names that exist, or undefined when it has them already. */
export function danglingConditions(fs: FlowSchema, levelNames: ReadonlySet<string>, now: number): Condition[] | undefined {
  const level = fs.spec?.priorityLevelConfiguration?.name ?? '';
  const missing = !levelNames.has(level);
  const want: Condition = missing
    ? { type: 'Dangling', status: 'True', reason: 'NotFound', message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object` }
    : { type: 'Dangling', status: 'False', reason: 'Found', message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" and it exists` };
  const conditions = fs.status?.conditions ?? [];
  const have = conditions.find((c) => c.type === 'Dangling');
  if (have && have.status === want.status && have.reason === want.reason && have.message === want.message) return undefined;
  want.lastTransitionTime = have && have.status === want.status && have.lastTransitionTime ? have.lastTransitionTime : rfc3339(now);
  return [...conditions.filter((c) => c.type !== 'Dangling'), want];
}
