// A webhook server as operators write them, for tests and benchmarks: HTTPS with a certificate from
// its own CA (for `<svc>.<ns>.svc` and 127.0.0.1), one handler per path taking the review's JSON and
// answering with JSON, or misbehaving on purpose (hang, close the connection, answer garbage).
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createCertificateAuthority, issueCertificate } from '../../src/pki/certificates.js';

/** What a handler does with one call: answer this JSON, or misbehave. */
export type WebhookAnswer = Record<string, unknown> | 'hang' | 'close' | 'garbage';

export type WebhookHandler = (review: Record<string, unknown>) => WebhookAnswer;

export class TestWebhookServer {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  readonly handlers = new Map<string, WebhookHandler>();
  /** Every call's path and body, in arrival order. */
  readonly calls: { path: string; body: Record<string, unknown> }[] = [];
  caPem = '';
  port = 0;

  /** `hosts`: the names its certificate is for (e.g. hooks.webhook-test.svc); 127.0.0.1 is always one. */
  async start(hosts: string[]): Promise<void> {
    const ca = await createCertificateAuthority('test-webhook-ca');
    const cert = await issueCertificate(ca, { commonName: hosts[0] ?? 'webhook', hosts: [...hosts, '127.0.0.1'], usage: 'server' });
    this.caPem = ca.certPem;
    const server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = new URL(req.url ?? '/', 'https://x').pathname;
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        } catch {
          // a test handler sees {} for a body that is not JSON
        }
        this.calls.push({ path, body });
        const handler = this.handlers.get(path);
        if (!handler) {
          res.writeHead(404).end('no handler');
          return;
        }
        const answer = handler(body);
        if (answer === 'hang') return;
        if (answer === 'close') return void req.socket.destroy();
        if (answer === 'garbage') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end('<html>not json');
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** The caBundle field of a WebhookClientConfig trusting this server. */
  get caBundle(): string {
    return Buffer.from(this.caPem).toString('base64');
  }

  /**
   * A Service `namespace/name` on port 443 and, as an operator's selectorless Service names its pod,
   * the Endpoints that lead it here: YAML for `kubectl apply -f -`.
   */
  serviceYaml(namespace: string, name: string): string {
    return `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  ports: [{name: https, port: 443, targetPort: ${this.port}}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: ${name}, namespace: ${namespace}}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [{name: https, port: ${this.port}}]
`;
  }

  callsTo(path: string): Record<string, unknown>[] {
    return this.calls.filter((c) => c.path === path).map((c) => c.body);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The request of an AdmissionReview. */
export function reviewRequest(review: Record<string, unknown>): Record<string, unknown> {
  return (review.request ?? {}) as Record<string, unknown>;
}

/** An AdmissionReview answer: allowed, or denied with a message and code; with a JSON patch and warnings. */
export function admissionAnswer(review: Record<string, unknown>, o: { allowed: boolean; message?: string; code?: number; patch?: unknown[]; warnings?: string[] }): Record<string, unknown> {
  const response: Record<string, unknown> = { uid: reviewRequest(review).uid, allowed: o.allowed };
  if (!o.allowed) response.status = { message: o.message ?? '', code: o.code ?? 403 };
  if (o.patch) {
    response.patch = Buffer.from(JSON.stringify(o.patch)).toString('base64');
    response.patchType = 'JSONPatch';
  }
  if (o.warnings) response.warnings = o.warnings;
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}
