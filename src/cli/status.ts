// `skiff status`: the clusters of this machine (the user's registry, and the current directory's
// .skiff when it holds one up made before there was a registry), each with its directory, state,
// health, nodes, servers, addresses and processes. What runs is read from each directory (locks and
// run record) and the API at that moment, never from what was last written down.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { ApiClient } from '../client/rest.js';
import { isNodeReady, type Node } from '../api/kinds/node.js';
import type { KubeList } from '../api/types.js';
import { errorText } from '../util/error-text.js';
import { userAgent } from '../version.js';
import { isClusterDir, readClusterName } from './cluster-dir.js';
import { nameFor, registeredClusters } from './cluster-registry.js';
import { describeProcesses, liveClusterProcesses, readClusterRun, type RunProcess } from './cluster-run.js';
import { contextName } from './user-kubeconfig.js';

export interface ClusterStatus {
  name: string;
  dataDir: string;
  /** running: its skiff up supervises it; stopped: nothing runs; orphaned: processes run without their skiff up. */
  state: 'starting' | 'running' | 'stopping' | 'stopped' | 'orphaned';
  healthy: boolean;
  /** Why it is not healthy, in a few words. */
  problem?: string;
  context: string;
  apiServers: string[];
  endpoint?: string;
  dashboard?: string;
  detached?: boolean;
  log?: string;
  nodes?: { name: string; ready: boolean }[];
  processes: RunProcess[];
}

async function nodesOf(dataDir: string): Promise<{ name: string; ready: boolean }[]> {
  const client = ApiClient.fromKubeconfig(join(dataDir, 'kubeconfig'), { timeoutMs: 3000, userAgent: userAgent('skiff-cli') });
  try {
    const list = await client.get<KubeList<Node>>('/api/v1/nodes');
    return list.items.map((n) => ({ name: n.metadata.name ?? '', ready: isNodeReady(n) })).sort((a, b) => a.name.localeCompare(b.name));
  } finally {
    client.close();
  }
}

export async function clusterStatus(name: string, dataDir: string): Promise<ClusterStatus> {
  const processes = liveClusterProcesses(dataDir);
  const run = readClusterRun(dataDir);
  const supervised = processes.some((p) => p.role === 'up');
  const state: ClusterStatus['state'] = !supervised ? (processes.length > 0 ? 'orphaned' : 'stopped') : run?.state === 'ready' ? 'running' : (run?.state ?? 'starting');
  const out: ClusterStatus = { name, dataDir, state, healthy: false, context: contextName(name), apiServers: run?.apiServers ?? [], processes };
  if (run && supervised) {
    if (run.endpoint) out.endpoint = run.endpoint;
    if (run.dashboard) out.dashboard = run.dashboard;
    out.detached = run.detached;
    if (run.log) out.log = run.log;
  }
  if (state === 'stopped') return { ...out, problem: 'not running' };
  if (state === 'orphaned') return { ...out, problem: `its skiff up is gone; skiff down --data-dir ${dataDir} stops what is left` };
  const missing = (run?.processes ?? []).filter((p) => !processes.some((q) => q.pid === p.pid));
  try {
    out.nodes = await nodesOf(dataDir);
  } catch (e) {
    return { ...out, problem: `the API does not answer: ${errorText(e)}` };
  }
  const notReady = out.nodes.filter((n) => !n.ready).map((n) => n.name);
  if (missing.length > 0) out.problem = `exited: ${missing.map((p) => p.name).join(', ')}`;
  else if (notReady.length > 0) out.problem = `not Ready: ${notReady.join(', ')}`;
  else if (state !== 'running') out.problem = state;
  out.healthy = out.problem === undefined;
  return out;
}

/** The clusters to show: every registered one, and the current directory's .skiff if it is one. */
function knownClusters(): { name: string; dataDir: string }[] {
  const all = registeredClusters();
  const here = resolve('.skiff');
  if (existsSync(here) && isClusterDir(here) && !all.some((c) => c.dataDir === here)) all.push({ name: readClusterName(here) ?? nameFor(here), dataDir: here });
  return all;
}

function render(s: ClusterStatus): string {
  const ready = s.nodes ? `${s.nodes.filter((n) => n.ready).length} of ${s.nodes.length} Ready` : undefined;
  const lines = [`${s.name}: ${s.state}, ${s.healthy ? 'healthy' : `not healthy (${s.problem})`}`, `  directory:  ${s.dataDir}`];
  if (s.state !== 'stopped') {
    lines.push(`  context:    ${s.context}${s.endpoint ? ` (${s.endpoint})` : ''}`);
    if (s.apiServers.length > 0) lines.push(`  servers:    ${s.apiServers.join(', ')}`);
    if (s.nodes) lines.push(`  nodes:      ${ready}: ${s.nodes.map((n) => `${n.name}${n.ready ? '' : ' (not Ready)'}`).join(', ')}`);
    if (s.dashboard) lines.push(`  dashboard:  ${s.dashboard}`);
    lines.push(`  processes:  ${describeProcesses(s.processes)}`);
    if (s.log) lines.push(`  log:        ${s.log}`);
  }
  return lines.join('\n');
}

export function statusCommand(): Command {
  return new Command('status')
    .description('the clusters `skiff up` started on this machine: directory, state, health, nodes, addresses, processes')
    .addOption(new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text'))
    .action(async (o: { output: 'text' | 'json' }) => {
      const all = await Promise.all(knownClusters().map((c) => clusterStatus(c.name, c.dataDir)));
      if (o.output === 'json') {
        console.log(JSON.stringify(all, null, 2));
        return;
      }
      if (all.length === 0) {
        console.log('no clusters on this machine (skiff up starts one)');
        return;
      }
      console.log(all.map(render).join('\n\n'));
    });
}
