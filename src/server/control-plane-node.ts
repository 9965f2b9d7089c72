// A control-plane member's own machine as a Node (`skiff server --with-agent`), as a k3s server
// runs its agent in-process and kubeadm marks its control-plane nodes: the
// node-role.kubernetes.io/control-plane label (kubectl's ROLES column) and the NoSchedule taint
// that keeps workloads off it unless they tolerate it. The node credential is issued here, by the
// member's own CA, so no join token is needed; the agent prefers its own API server.
import { errorText } from '../util/error-text.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, RetiredError, type AgentNodeConfig } from '../agent/agent.js';
import { AgentStateDir } from '../agent/state-dir.js';
import { certificateCommonName } from '../agent/tls.js';
import type { Taint } from '../api/kinds/node.js';
import { NODES_GROUP, nodeUserName } from '../auth/user.js';
import { issueCertificate, type CertificateAuthority } from '../pki/certificates.js';
import type { Logger } from '../util/log.js';
import { PidLock } from '../util/pid-lock.js';
import { systemClock } from '../util/clock.js';

export const CONTROL_PLANE_ROLE = 'node-role.kubernetes.io/control-plane';

export interface ControlPlaneNodeOptions {
  /** The member's data dir; the node's state goes to <dataDir>/agent. */
  dataDir: string;
  node: AgentNodeConfig;
  ca: CertificateAuthority;
  /** This member's own URL. */
  serverUrl: string;
  log: Logger;
  /**
   * Puts the control-plane role label on the Node with the member's own credentials, as kubeadm
   * marks its control-plane nodes: a node credential may not set node-role labels itself.
   */
  markControlPlane(nodeName: string): Promise<void>;
}

export interface ControlPlaneNode {
  agent: Agent;
  /** Drains and removes the Node (graceful exit), then releases the data dir. */
  stop(reason: string): Promise<void>;
  /** Stops, keeping pods and the Node for the next server (an upgrade). */
  restartInPlace(): Promise<void>;
  /** Stops its containers with the whole cluster, keeping the Node and pods for the next start (N6a). */
  powerOff(): Promise<void>;
}

export async function startControlPlaneNode(o: ControlPlaneNodeOptions): Promise<ControlPlaneNode | undefined> {
  const dir = join(o.dataDir, 'agent');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = PidLock.acquire(join(dir, 'agent.lock'), `the agent data dir ${dir}`);
  const state = new AgentStateDir(dir);
  const nodeName = (o.node.nodeName ?? '').toLowerCase();
  const cred = state.readCredential();
  // A credential for another name, or from another cluster's CA (a reused data dir), is replaced.
  if (!cred || certificateCommonName(cred.certPem) !== `system:node:${nodeName}` || cred.caPem.trim() !== o.ca.certPem.trim()) {
    const issued = await issueCertificate(o.ca, { commonName: nodeUserName(nodeName), organizations: [NODES_GROUP], usage: 'client' });
    state.writeCredential({ ...issued, caPem: o.ca.certPem });
  }
  const taint: Taint = { key: CONTROL_PLANE_ROLE, effect: 'NoSchedule' };
  const agent = new Agent(
    {
      ...o.node,
      nodeName,
      labels: o.node.labels,
      taints: o.node.taints.some((t) => t.key === taint.key && t.effect === taint.effect) ? o.node.taints : [...o.node.taints, taint],
      dataDir: dir,
      servers: [o.serverUrl],
      localServer: o.serverUrl,
      credentials: { kind: 'token' },
      endpointDiscovery: true,
      rejoin: false,
    },
    o.log,
  );
  try {
    await agent.start();
  } catch (e) {
    // A retired control-plane node stays out, and one that cannot register (its name taken by
    // another machine) says why: either way the member itself keeps serving.
    if (e instanceof RetiredError) o.log.warn({ node: nodeName, err: e.message }, 'control-plane node not registered');
    else o.log.error({ node: nodeName, err: errorText(e) }, 'control-plane node failed to start');
    await agent.shutdown('failed to start').catch(() => {});
    lock.release();
    return undefined;
  }
  const labelling = new AbortController();
  void markUntilDone(o, nodeName, labelling.signal);
  return {
    agent,
    async stop(reason) {
      labelling.abort();
      await agent.shutdown(reason);
      lock.release();
    },
    async restartInPlace() {
      labelling.abort();
      await agent.restartInPlace();
      lock.release();
    },
    async powerOff() {
      labelling.abort();
      await agent.powerOff();
      lock.release();
    },
  };
}

/** Labels the Node as a control-plane one, trying again with back-off (one log line) until it is done or the node stops. */
async function markUntilDone(o: ControlPlaneNodeOptions, nodeName: string, signal: AbortSignal): Promise<void> {
  let said = false;
  for (let delay = 500; !signal.aborted; delay = Math.min(delay * 2, 30_000)) {
    try {
      await o.markControlPlane(nodeName);
      if (said) o.log.info({ node: nodeName }, 'control-plane node labelled');
      return;
    } catch (e) {
      if (!said) o.log.warn({ node: nodeName, err: errorText(e) }, 'could not label the control-plane node; trying again');
      said = true;
      await systemClock.sleep(delay, signal).catch(() => undefined);
    }
  }
}
