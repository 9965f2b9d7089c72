// The API server's way to a node agent, as kube-apiserver's to the kubelet: pods/log streams a
// container's output from the agent's /containerLogs, and nodes/proxy forwards GETs (/metrics,
// /healthz) to the agent, authenticated with the server's kubelet client certificate.
import { clientGone } from './http/listener.js';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '../api/types.js';
import { StatusError, badRequest, serviceUnavailable } from '../api/errors.js';
import type { NodeProxy, PodLogStreamer } from './resource-handler.js';

const PASSED_PARAMS = ['follow', 'previous', 'timestamps', 'tailLines', 'sinceSeconds', 'sinceTime', 'limitBytes'];

interface NodeEndpoint {
  address: string;
  port: number;
}

/** Where a node's agent serves, from its status (InternalIP, kubelet endpoint port). */
function nodeEndpoint(node: KubeObject): NodeEndpoint {
  const status = (node.status ?? {}) as { addresses?: { type: string; address: string }[]; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } };
  const address = status.addresses?.find((a) => a.type === 'InternalIP')?.address ?? status.addresses?.[0]?.address;
  const port = status.daemonEndpoints?.kubeletEndpoint?.Port;
  if (!address || !port) throw serviceUnavailable(`node ${node.metadata.name} does not report an address and port for its agent`);
  return { address, port };
}

export class AgentProxy implements PodLogStreamer, NodeProxy {
  private readonly agent: https.Agent;
  constructor(
    private readonly lookupNode: (name: string) => Promise<KubeObject | undefined>,
    client: { certPem: string; keyPem: string },
  ) {
    // Agents serve with self-signed certificates; like kube-apiserver without
    // --kubelet-certificate-authority, the server does not verify them, but it does authenticate itself.
    this.agent = new https.Agent({ keepAlive: true, cert: client.certPem, key: client.keyPem, rejectUnauthorized: false });
  }

  async stream(pod: KubeObject, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const podName = pod.metadata.name!;
    const spec = (pod.spec ?? {}) as { nodeName?: string; containers?: { name: string }[]; initContainers?: { name: string }[] };
    const containers = (spec.containers ?? []).map((c) => c.name);
    const inits = (spec.initContainers ?? []).map((c) => c.name);
    let container = query.get('container') ?? undefined;
    if (!container) {
      if (containers.length !== 1) throw badRequest(`a container name must be specified for pod ${podName}, choose one of: [${containers.join(' ')}]`);
      container = containers[0]!;
    } else if (!containers.includes(container) && !inits.includes(container)) {
      throw badRequest(`container ${container} is not valid for pod ${podName}`);
    }
    if (!spec.nodeName) throw badRequest(`pod ${podName} does not have a host assigned`);
    const node = await this.lookupNode(spec.nodeName);
    if (!node) throw badRequest(`pod ${podName} is bound to node ${spec.nodeName}, which does not exist`);
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
