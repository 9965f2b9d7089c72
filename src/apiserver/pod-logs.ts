// pods/log: the API server asks the pod's agent for the container's output and streams it back,
// as kube-apiserver does with the kubelet's /containerLogs endpoint.
import { clientGone } from './http/listener.js';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '../api/types.js';
import { StatusError, badRequest, serviceUnavailable } from '../api/errors.js';
import type { PodLogStreamer } from './resource-handler.js';

const PASSED_PARAMS = ['follow', 'previous', 'timestamps', 'tailLines', 'sinceSeconds', 'sinceTime', 'limitBytes'];

interface NodeEndpoint {
  address: string;
  port: number;
}

export class AgentLogProxy implements PodLogStreamer {
  private readonly agent: https.Agent;
  constructor(
    private readonly lookupNode: (name: string) => Promise<KubeObject | undefined>,
    client: { certPem: string; keyPem: string },
  ) {
    // Agents serve with self-signed certificates; like kube-apiserver without
    // --kubelet-certificate-authority, the server does not verify them, but it does authenticate itself.
    this.agent = new https.Agent({ keepAlive: true, cert: client.certPem, key: client.keyPem, rejectUnauthorized: false });
  }

  private async endpoint(pod: KubeObject): Promise<NodeEndpoint> {
    const podName = pod.metadata.name!;
    const nodeName = ((pod.spec ?? {}) as { nodeName?: string }).nodeName;
    if (!nodeName) throw badRequest(`pod ${podName} does not have a host assigned`);
    const node = await this.lookupNode(nodeName);
    if (!node) throw badRequest(`pod ${podName} is bound to node ${nodeName}, which does not exist`);
    const status = (node.status ?? {}) as { addresses?: { type: string; address: string }[]; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } };
    const address = status.addresses?.find((a) => a.type === 'InternalIP')?.address ?? status.addresses?.[0]?.address;
    const port = status.daemonEndpoints?.kubeletEndpoint?.Port;
    if (!address || !port) throw serviceUnavailable(`node ${nodeName} does not report an address and port for logs`);
    return { address, port };
  }

  async stream(pod: KubeObject, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const containers = (((pod.spec ?? {}) as { containers?: { name: string }[]; initContainers?: { name: string }[] }).containers ?? []).map((c) => c.name);
    const inits = (((pod.spec ?? {}) as { initContainers?: { name: string }[] }).initContainers ?? []).map((c) => c.name);
    let container = query.get('container') ?? undefined;
    if (!container) {
      if (containers.length !== 1) {
        throw badRequest(`a container name must be specified for pod ${pod.metadata.name}, choose one of: [${containers.join(' ')}]`);
      }
      container = containers[0]!;
    } else if (!containers.includes(container) && !inits.includes(container)) {
      throw badRequest(`container ${container} is not valid for pod ${pod.metadata.name}`);
    }
    const { address, port } = await this.endpoint(pod);
    const q = new URLSearchParams();
    for (const p of PASSED_PARAMS) {
      const v = query.get(p);
      if (v !== null) q.set(p, v);
    }
    const host = address.includes(':') ? `[${address}]` : address;
    const path = `/containerLogs/${encodeURIComponent(pod.metadata.namespace!)}/${encodeURIComponent(pod.metadata.name!)}/${encodeURIComponent(container)}?${q}`;
    await new Promise<void>((resolve, reject) => {
      const upstream = https.get(`https://${host}:${port}${path}`, { agent: this.agent, timeout: 10_000 }, (agentRes) => {
        const code = agentRes.statusCode ?? 502;
        if (code !== 200) {
          let text = '';
          agentRes.on('data', (d) => (text += d));
          agentRes.on('end', () => reject(new StatusError(code === 404 ? 404 : 400, code === 404 ? 'NotFound' : 'BadRequest', text.trim() || `the node answered ${code}`)));
          return;
        }
        upstream.setTimeout(0);
        // No Transfer-Encoding: Node frames an HTTP/1.1 body without a length as chunks itself,
        // and HTTP/2 forbids the header.
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' });
        res.flushHeaders();
        agentRes.pipe(res);
        agentRes.on('end', resolve);
        agentRes.on('error', resolve);
      });
      upstream.on('timeout', () => upstream.destroy(new Error('timed out connecting to the node')));
      upstream.on('error', (e) => reject(serviceUnavailable(`cannot fetch logs from node ${address}:${port}: ${e.message}`)));
      const stop = () => upstream.destroy();
      req.on('close', stop);
      res.on('close', stop);
      // The client may have left while the node was looked up; its close events already fired.
      if (clientGone(req, res)) stop();
    });
  }
}
