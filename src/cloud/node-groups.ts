// Bringing a local cloud's node groups up and down as `skiff up --cloud local` and the scenarios do:
// the groups and their first MIN instances (stopped ones started again first), and at the end
// either every instance stopped with its cluster (kept, as machines switched off are) or deleted,
// its agent leaving as a machine shut down by its cloud does.
import type { AutoscalerGroup } from './autoscaler/autoscaler.js';
import type { InstanceType } from './api.js';
import type { CloudClient } from './client.js';
import { CLUSTER_STOP_SIGNAL } from '../util/stop-signals.js';

/** Waits for the cloud, makes the node groups and their first MIN instances; returns how many. */
export async function startNodeGroups(cloud: CloudClient, groups: AutoscalerGroup[], type: InstanceType | undefined): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await cloud.nodeGroups();
      break;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  if (type) await cloud.setInstanceType(type);
  let started = 0;
  for (const g of groups) {
    await cloud.setNodeGroup(g.name, { instanceType: type?.name ?? 'medium', minSize: g.min, maxSize: g.max });
    // Machines stopped with the cluster come back as the same Nodes, their pods with them.
    for (const i of await cloud.instances(g.name)) if (i.state === 'Stopped') await cloud.startInstance(i.id);
    const have = (await cloud.instances(g.name)).filter((i) => i.state === 'Running' || i.state === 'Pending').length;
    if (g.min > have) await cloud.createInstances(g.name, g.min - have);
    started += Math.max(g.min, have);
  }
  return started;
}

/**
 * Deletes every instance (their agents leave gracefully) and waits until they are gone, at most a
 * minute. Each group is first closed (its size bounds set to 0) so that an autoscaler still
 * running cannot replace the machines as their Nodes leave and their pods go pending; any
 * instance that appears all the same is deleted too. `skiff up` sets the bounds again at start.
 */
export async function stopCloudInstances(cloud: CloudClient): Promise<void> {
  try {
    for (const g of await cloud.nodeGroups()) await cloud.setNodeGroup(g.name, { minSize: 0, maxSize: 0 });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const all = await cloud.instances();
      await Promise.all(all.filter((i) => i.state === 'Pending' || i.state === 'Running' || i.state === 'Stopped').map((i) => cloud.deleteInstance(i.id)));
      if (all.every((i) => i.state === 'Terminated') || Date.now() > deadline) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch {
    /* the cloud is gone: its machines stay as it left them */
  }
}

/**
 * The whole cluster stops: every running instance is stopped and kept, its agent told so (it keeps
 * its Node and pods), as machines switched off with the rest of their cluster; the next start
 * boots them again. Resolves once all are stopped, or the cloud is gone.
 */
export async function stopCloudInstancesWithCluster(cloud: CloudClient): Promise<void> {
  try {
    const running = (await cloud.instances()).filter((i) => i.state === 'Running' || i.state === 'Pending');
    await Promise.all(running.map((i) => cloud.stopInstance(i.id, CLUSTER_STOP_SIGNAL)));
  } catch {
    /* the cloud is gone: its machines stay as it left them */
  }
}

/** Agent arguments (`--flag value` pairs and bare flags) as `skiff cloud serve --agent-flag=--flag=value`. */
export function asAgentFlags(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const next = args[i + 1];
    if (!args[i]!.includes('=') && next !== undefined && !next.startsWith('--')) out.push(`--agent-flag=${args[i]}=${args[++i]}`);
    else out.push(`--agent-flag=${args[i]}`);
  }
  return out;
}
