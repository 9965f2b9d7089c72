// Calls out of the API server to a webhook described by a WebhookClientConfig: admission webhooks
// and CRD conversion webhooks both go through here. A URL is called as it is; a Service reference
// is resolved to one ready endpoint and its certificate verified against `<svc>.<ns>.svc`, as
// upstream's. Every call is asynchronous I/O with a deadline and a bounded answer: a webhook that
// hangs, closes, or sends garbage fails that one call with a readable reason, never the server.
import { Agent, request } from 'node:https';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { isIP } from 'node:net';
import type { Clock } from '../../util/clock.js';
import { systemClock } from '../../util/clock.js';
import { DEFAULT_WEBHOOK_PORT, type WebhookClientConfig } from '../../api/webhook-client-config.js';
import { WebhookCallError } from './call-error.js';
import { resolveServiceEndpoint, type ServiceEndpointObjects } from './service-endpoints.js';
import { hostPort } from '../service-resolver.js';

export { WebhookCallError };

/** The largest answer read from a webhook; a bigger one fails the call rather than fill memory. */
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

interface Target {
  /** The URL as upstream's errors show it (with ?timeout=), e.g. https://svc.ns.svc:443/validate?timeout=10s. */
  display: string;
  host: string;
  port: number;
  path: string;
  /** The name the certificate must carry. */
  serverName: string;
}

/** Go's rendering of a timeout in a URL query: 10s, 1.5s. */
function goSeconds(ms: number): string {
  return `${ms / 1000}s`;
}

function decodeCaBundle(caBundle: string | undefined): string | undefined {
  if (!caBundle) return undefined;
  const text = Buffer.from(caBundle, 'base64').toString('utf8');
  return text.includes('-----BEGIN') ? text : undefined;
}

/** Upstream's client errors, in Go's words, for what Node reports. */
function describeFailure(e: unknown, target: Target, timedOut: boolean): string {
  const prefix = `Post "${target.display}"`;
  if (timedOut) return `${prefix}: context deadline exceeded`;
  const err = e as NodeJS.ErrnoException & { reason?: string };
  const addr = hostPort(target);
  switch (err.code) {
    case 'ECONNREFUSED':
      return `${prefix}: dial tcp ${addr}: connect: connection refused`;
    case 'ECONNRESET':
    case 'EPIPE':
      return `${prefix}: EOF`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${prefix}: dial tcp: lookup ${target.host}: no such host`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${prefix}: dial tcp ${addr}: connect: no route to host`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return `${prefix}: tls: failed to verify certificate: x509: certificate signed by unknown authority`;
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `${prefix}: tls: failed to verify certificate: x509: certificate is valid for ${err.reason ?? 'other names'}, not ${target.serverName}`;
    case 'CERT_HAS_EXPIRED':
      return `${prefix}: tls: failed to verify certificate: x509: certificate has expired or is not yet valid`;
  }
  return `${prefix}: ${err instanceof Error ? err.message : String(e)}`;
}

/** What an HTTP error answer says, as client-go's REST client renders one. */
function describeHttpError(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { kind?: unknown; message?: unknown };
    if (parsed.kind === 'Status' && typeof parsed.message === 'string' && parsed.message) return parsed.message;
  } catch {
    // not a Status: fall through
  }
  const text = body.trim();
  if (status === 404) return 'the server could not find the requested resource';
  if (text) return `an error on the server ("${text.length > 200 ? `${text.slice(0, 200)}...` : text}") has prevented the request from succeeding`;
  return `the server responded with the status code ${status} but did not return more information`;
}

export interface WebhookClientOptions {
  /** The objects a Service reference is resolved through. */
  endpoints: ServiceEndpointObjects;
  clock?: Clock;
}

export class WebhookClient {
  private readonly clock: Clock;
  /** Connections are kept between calls: a webhook on every create must not cost a TLS handshake each. */
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 });

  constructor(private readonly opts: WebhookClientOptions) {
    this.clock = opts.clock ?? systemClock;
  }

  /**
   * POSTs `body` as JSON to the webhook and gives back its JSON answer. Throws a WebhookCallError
   * (with upstream's client wording) when the webhook cannot be reached, does not answer within
   * `timeoutMs`, answers with an HTTP error, or answers with something that is not JSON.
   */
  async post(cc: WebhookClientConfig, body: unknown, timeoutMs: number): Promise<unknown> {
    const target = await this.target(cc, timeoutMs);
    const payload = Buffer.from(JSON.stringify(body));
    const ca = decodeCaBundle(cc.caBundle);
    return new Promise<unknown>((resolve, reject) => {
      let timedOut = false;
      let settled = false;
      const finish = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        timer.cancel();
        fn();
      };
      const req = request({
        agent: this.agent,
        method: 'POST',
        host: target.host,
        port: target.port,
        path: target.path,
        // SNI only carries names; the identity check below is what matters.
        ...(isIP(target.serverName) ? {} : { servername: target.serverName }),
        ...(ca ? { ca } : {}),
        checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(target.serverName, cert),
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': payload.length },
      });
      const timer = this.clock.setTimeout(() => {
        timedOut = true;
        req.destroy(new Error('timeout'));
      }, timeoutMs);
      req.on('error', (e) => finish(() => reject(new WebhookCallError(describeFailure(e, target, timedOut)))));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy();
            return finish(() => reject(new WebhookCallError(`Post "${target.display}": response body larger than ${MAX_RESPONSE_BYTES} bytes`)));
          }
          chunks.push(c);
        });
        res.on('error', (e) => finish(() => reject(new WebhookCallError(describeFailure(e, target, timedOut)))));
        res.on('aborted', () => finish(() => reject(new WebhookCallError(describeFailure(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }), target, timedOut)))));
        res.on('end', () =>
          finish(() => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status < 200 || status > 299) return reject(new WebhookCallError(describeHttpError(status, text), status));
            try {
              resolve(JSON.parse(text) as unknown);
            } catch (e) {
              reject(new WebhookCallError(`couldn't get version/kind; json parse error: ${e instanceof Error ? e.message : String(e)}`));
            }
          }),
        );
      });
      req.end(payload);
    });
  }

  /** Where a client config points. A Service is resolved now, to one of its ready endpoints. */
  private async target(cc: WebhookClientConfig, timeoutMs: number): Promise<Target> {
    const timeoutQuery = `timeout=${goSeconds(timeoutMs)}`;
    if (cc.url) {
      const u = new URL(cc.url);
      const host = u.hostname.replace(/^\[|\]$/g, '');
      return { display: `${cc.url}?${timeoutQuery}`, host, port: u.port ? Number(u.port) : 443, path: `${u.pathname}${u.search ? `${u.search}&` : '?'}${timeoutQuery}`, serverName: host };
    }
    const svc = cc.service;
    if (!svc) throw new WebhookCallError('neither service nor url set in webhook client config');
    const port = svc.port ?? DEFAULT_WEBHOOK_PORT;
    const serverName = `${svc.name}.${svc.namespace}.svc`;
    const path = svc.path || '/';
    const display = `https://${serverName}:${port}${path}?${timeoutQuery}`;
    try {
      const ep = await resolveServiceEndpoint(this.opts.endpoints, svc.namespace, svc.name, port);
      return { display, host: ep.host, port: ep.port, path: `${path}?${timeoutQuery}`, serverName };
    } catch (e) {
      throw new WebhookCallError(`Post "${display}": ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Closes kept connections (the server stops). */
  close(): void {
    this.agent.destroy();
  }
}
