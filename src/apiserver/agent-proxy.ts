// The API server's way to a node agent, as kube-apiserver's to the kubelet: pods/log streams a
// container's output from the agent's /containerLogs; pods/exec, attach and portforward relay the
// client's upgraded connection to the agent's /exec, /attach and /portForward; nodes/proxy
// forwards GETs (/metrics, /healthz). The server authenticates with its kubelet client certificate.
import { clientGone } from './http/listener.js';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '../api/types.js';
import { RUNTIME_LABEL } from '../api/kinds/node.js';
import { StatusError, badRequest, serviceUnavailable } from '../api/errors.js';
import type { NodeProxy, PodLogStreamer, PodStreamer } from './resource-handler.js';
import { queryBool } from '../api/query-params.js';
import { UpgradeRefused, relayUpgrade, upgradeHeaders, type Upgrade } from '../util/upgrade.js';

const PASSED_PARAMS = ['follow', 'previous', 'timestamps', 'tailLines', 'sinceSeconds', 'sinceTime', 'limitBytes'];

interface NodeEndpoint {
  address: string;
  port: number;
}

/** Where a node's agent serves, from its status (InternalIP, kubelet endpoint port); undefined when it says nowhere (a `skiff sim` node). */
export function agentEndpoint(node: KubeObject): NodeEndpoint | undefined {
  const status = (node.status ?? {}) as { addresses?: { type: string; address: string }[]; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } };
  const address = status.addresses?.find((a) => a.type === 'InternalIP')?.address ?? status.addresses?.[0]?.address;
  const port = status.daemonEndpoints?.kubeletEndpoint?.Port;
  return address && port ? { address, port } : undefined;
}

/** Where a node's agent serves; a Status saying why when it serves nowhere. */
function nodeEndpoint(node: KubeObject): NodeEndpoint {
  const at = agentEndpoint(node);
  if (!at) {
    // A node of a `skiff sim` fleet serves nothing: its pods run no process, so there is nothing to read or enter.
    if (node.metadata.labels?.[RUNTIME_LABEL] === 'simulated') {
      throw badRequest(`node ${node.metadata.name} is simulated (skiff sim): its pods run no process, so they have no logs, exec or port-forward; run the pod on a node whose agent has --runtime process or containerd`);
    }
    throw serviceUnavailable(`node ${node.metadata.name} does not report an address and port for its agent`);
  }
  return at;
}

type PodSpecShape = { nodeName?: string; containers?: { name: string }[]; initContainers?: { name: string }[]; ephemeralContainers?: { name: string }[] };

/** The container a request names, or the pod's only one; a BadRequest as upstream words it otherwise. */
function containerOf(pod: KubeObject, query: URLSearchParams, alsoInits: boolean): string {
  const podName = pod.metadata.name!;
  const spec = (pod.spec ?? {}) as PodSpecShape;
  const containers = (spec.containers ?? []).map((c) => c.name);
  const others = [...(alsoInits ? (spec.initContainers ?? []) : []), ...(spec.ephemeralContainers ?? [])].map((c) => c.name);
  const container = query.get('container') || undefined;
  if (!container) {
    if (containers.length !== 1) throw badRequest(`a container name must be specified for pod ${podName}, choose one of: [${containers.join(' ')}]`);
    return containers[0]!;
  }
  if (!containers.includes(container) && !others.includes(container)) throw badRequest(`container ${container} is not valid for pod ${podName}`);
  return container;
}

export class AgentProxy implements PodLogStreamer, NodeProxy, PodStreamer {
  private readonly agent: https.Agent;
  constructor(
    private readonly lookupNode: (name: string) => Promise<KubeObject | undefined>,
    private readonly client: { certPem: string; keyPem: string },
  ) {
    // Agents serve with self-signed certificates; like kube-apiserver without
    // --kubelet-certificate-authority, the server does not verify them, but it does authenticate itself.
    this.agent = new https.Agent({ keepAlive: true, cert: client.certPem, key: client.keyPem, rejectUnauthorized: false });
  }

  /** The node a pod runs on, as a BadRequest when it has none (yet, or any more). */
  private async nodeOf(pod: KubeObject): Promise<KubeObject> {
    const podName = pod.metadata.name!;
    const nodeName = ((pod.spec ?? {}) as PodSpecShape).nodeName;
    if (!nodeName) throw badRequest(`pod ${podName} does not have a host assigned`);
    const node = await this.lookupNode(nodeName);
    if (!node) throw badRequest(`pod ${podName} is bound to node ${nodeName}, which does not exist`);
    return node;
  }

  async connect(pod: KubeObject, sub: 'exec' | 'attach' | 'portforward', query: URLSearchParams, req: IncomingMessage, res: ServerResponse, up: Upgrade): Promise<void> {
    const podName = pod.metadata.name!;
    const ns = encodeURIComponent(pod.metadata.namespace!);
    const phase = (pod.status as { phase?: string } | undefined)?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') {
      throw badRequest(sub === 'portforward' ? `pod ${podName} is not running and cannot be forwarded to; current phase is ${phase}` : `cannot ${sub} into a container in a completed pod; current phase is ${phase}`);
    }
    // The kubelet's own parameter names (input, output, error), as kube-apiserver passes them on.
    const q = new URLSearchParams();
    let path: string;
    if (sub === 'portforward') {
      for (const p of query.getAll('ports')) q.append('port', p);
      path = `/portForward/${ns}/${encodeURIComponent(podName)}`;
    } else {
      const container = containerOf(pod, query, false);
      const streams = { input: queryBool(query, 'stdin'), output: queryBool(query, 'stdout'), error: queryBool(query, 'stderr'), tty: queryBool(query, 'tty') };
      if (!streams.input && !streams.output && !streams.error) throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
      if (sub === 'exec') {
        const command = query.getAll('command');
        if (command.length === 0) throw badRequest('you must specify at least one command for the container');
        for (const c of command) q.append('command', c);
      }
      for (const [k, v] of Object.entries(streams)) if (v) q.set(k, '1');
      path = `/${sub}/${ns}/${encodeURIComponent(podName)}/${encodeURIComponent(container)}`;
    }
    const at = nodeEndpoint(await this.nodeOf(pod));
    const host = at.address.includes(':') ? `[${at.address}]` : at.address;
    try {
      await relayUpgrade(up, {
        url: `https://${host}:${at.port}${path}?${q}`,
        method: req.method ?? 'GET',
        headers: upgradeHeaders(req),
        tls: this.client,
        onOpen: () => (res.statusCode = 101),
      });
    } catch (e) {
      if (e instanceof UpgradeRefused) throw new StatusError(e.status === 404 ? 404 : e.status === 403 ? 403 : 400, e.status === 404 ? 'NotFound' : e.status === 403 ? 'Forbidden' : 'BadRequest', e.body);
      throw serviceUnavailable(`cannot reach the agent of node ${((pod.spec ?? {}) as PodSpecShape).nodeName} at ${at.address}:${at.port}: ${(e as Error).message}`);
    }
  }

  async stream(pod: KubeObject, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const podName = pod.metadata.name!;
    const container = containerOf(pod, query, true);
    const node = await this.nodeOf(pod);
    const q = new URLSearchParams();
    for (const p of PASSED_PARAMS) {
      const v = query.get(p);
      if (v !== null) q.set(p, v);
    }
    const path = `/containerLogs/${encodeURIComponent(pod.metadata.namespace!)}/${encodeURIComponent(podName)}/${encodeURIComponent(container)}?${q}`;
    await this.forward(nodeEndpoint(node), path, req, res, 'logs from node', (code, text) => new StatusError(code === 404 ? 404 : 400, code === 404 ? 'NotFound' : 'BadRequest', text));
  }

  async proxy(node: KubeObject, path: string, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const q = query.toString();
    await this.forward(nodeEndpoint(node), `${path}${q ? `?${q}` : ''}`, req, res, `node ${node.metadata.name}`, (code, text) => new StatusError(code === 404 ? 404 : 503, code === 404 ? 'NotFound' : 'ServiceUnavailable', text));
  }

  /** The body of a GET of `path` on the node's agent (a scrape); rejects on anything but a 200. */
  fetchText(node: KubeObject, path: string, timeoutMs: number): Promise<string> {
    const at = nodeEndpoint(node);
    const host = at.address.includes(':') ? `[${at.address}]` : at.address;
    return new Promise<string>((resolve, reject) => {
      const req = https.get(`https://${host}:${at.port}${path}`, { agent: this.agent, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode === 200) resolve(body);
          else reject(new Error(`${path} answered ${res.statusCode}: ${body.trim().slice(0, 200)}`));
        });
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
    });
  }

  /** GETs `path` on the agent and passes its answer back as it comes; a refusal becomes `refused`'s Status. */
  private forward(at: NodeEndpoint, path: string, req: IncomingMessage, res: ServerResponse, what: string, refused: (code: number, text: string) => StatusError): Promise<void> {
    const host = at.address.includes(':') ? `[${at.address}]` : at.address;
    return new Promise<void>((resolve, reject) => {
      const upstream = https.get(`https://${host}:${at.port}${path}`, { agent: this.agent, timeout: 10_000 }, (agentRes) => {
        const code = agentRes.statusCode ?? 502;
        if (code !== 200) {
          let text = '';
          agentRes.on('data', (d) => (text += d));
          agentRes.on('end', () => reject(refused(code, text.trim() || `the node answered ${code}`)));
          return;
        }
        upstream.setTimeout(0);
        // No Transfer-Encoding: Node frames an HTTP/1.1 body without a length as chunks itself,
        // and HTTP/2 forbids the header.
        res.writeHead(200, { 'Content-Type': agentRes.headers['content-type'] ?? 'text/plain', 'Cache-Control': 'no-cache, private' });
        res.flushHeaders();
        agentRes.pipe(res);
        agentRes.on('end', resolve);
        agentRes.on('error', resolve);
      });
      upstream.on('timeout', () => upstream.destroy(new Error('timed out connecting to the node')));
      upstream.on('error', (e) => reject(serviceUnavailable(`cannot fetch ${what} ${at.address}:${at.port}: ${e.message}`)));
      const stop = () => upstream.destroy();
      req.on('close', stop);
      res.on('close', stop);
      // The client may have left while the node was looked up; its close events already fired.
      if (clientGone(req, res)) stop();
    });
  }
}
