// How the aggregation layer calls an extension API server: HTTPS to one endpoint of its Service,
// the server's certificate checked against the APIService's caBundle for the name
// `<service>.<namespace>.svc` (or not at all with insecureSkipTLSVerify), the front-proxy client
// certificate presented. Connecting is bounded, so a server that does not answer costs a request a
// few seconds, never a hang; everything is asynchronous I/O, never the main thread's time.
import https from 'node:https';
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { hostPort, type ResolvedEndpoint } from '../service-resolver.js';

/** Where one call goes and how its server is trusted. */
export interface ExtensionTarget {
  endpoint: ResolvedEndpoint;
  /** The name the server's certificate must carry. */
  serverName: string;
  /** PEM bundle from spec.caBundle; undefined: the system's trusted roots, as upstream. */
  caPem?: string;
  insecureSkipTLSVerify: boolean;
}

export interface ExtensionRequest {
  method: string;
  /** Path and query, as the client sent them. */
  path: string;
  headers: OutgoingHttpHeaders;
  /** Longest wait for the response's head once connected; none for watches. */
  responseTimeoutMs?: number;
}

/** Upstream dials extension servers with a 30 s timeout and checks availability within 5 s; a loopback cluster needs far less. */
export const CONNECT_TIMEOUT_MS = 5_000;

export class ExtensionTransport {
  // One keep-alive agent: Node keys its pooled connections by the TLS options of each request
  // (CA, certificate, server name, verification), so targets never share a connection they should not.
  private readonly agent = new https.Agent({ keepAlive: true, maxSockets: 64 });

  constructor(
    private readonly client: { certPem: string; keyPem: string },
    private readonly connectTimeoutMs = CONNECT_TIMEOUT_MS,
  ) {}

  /** Starts a call; its errors (refused, timed out, untrusted) come as the request's 'error' event. */
  request(target: ExtensionTarget, r: ExtensionRequest, onResponse: (res: IncomingMessage) => void): ClientRequest {
    const req = https.request(
      {
        agent: this.agent,
        host: target.endpoint.host,
        port: target.endpoint.port,
        method: r.method,
        path: r.path,
        headers: { ...r.headers, host: hostPort(target.endpoint) },
        servername: target.serverName,
        ...(target.caPem ? { ca: target.caPem } : {}),
        rejectUnauthorized: !target.insecureSkipTLSVerify,
        cert: this.client.certPem,
        key: this.client.keyPem,
      },
      (res) => {
        clearTimeout(responseTimer);
        onResponse(res);
      },
    );
    let responseTimer: NodeJS.Timeout | undefined;
    const waitForResponse = (): void => {
      const ms = r.responseTimeoutMs;
      if (ms === undefined) return;
      responseTimer = setTimeout(() => req.destroy(new Error(`no response within ${ms / 1000}s`)), ms);
    };
    req.once('socket', (socket) => {
      const tls = socket as TLSSocket;
      // A pooled connection is already up; a new one has until the timeout to finish its handshake.
      if (!tls.connecting && tls.encrypted && !tls.pending) return waitForResponse();
      const dial = setTimeout(() => req.destroy(new Error(`dial tcp ${hostPort(target.endpoint)}: i/o timeout`)), this.connectTimeoutMs);
      tls.once('secureConnect', () => {
        clearTimeout(dial);
        waitForResponse();
      });
      tls.once('close', () => clearTimeout(dial));
    });
    req.once('close', () => clearTimeout(responseTimer));
    return req;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The PEM text of a caBundle (base64 in the object's JSON); undefined when it has none. */
export function caBundlePem(caBundle: string | undefined): string | undefined {
  if (!caBundle) return undefined;
  return Buffer.from(caBundle, 'base64').toString('utf8');
}
