// A request's audit, as upstream's audit filters keep it: its Audit-Id from the first moment,
// its level decided once the caller is known, then an event at each stage the policy keeps
// (RequestReceived; ResponseStarted for watches and streams; ResponseComplete, or Panic).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Status } from '../../api/types.js';
import type { UserInfo } from '../request-context.js';
import { authorizationScope, type RequestInfo } from '../http/request-info.js';
import { observeRequestBody } from '../http/body-observer.js';
import { yaml } from '../../util/lazy-yaml.js';
import { AUDIT_API_VERSION, levelAtLeast, type AuditDecision, type PolicyChecker, type Stage } from './policy.js';
import { auditUser, sourceIPs, userAgentOf, type AuditEvent, type ObjectReference, type ResponseStatus } from './event.js';
import { microTime } from '../../util/time.js';
import type { AuditSink } from './log-backend.js';

/** Upstream's header: a request may bring its own audit ID (a proxy in front set it); the answer always names it. */
export const AUDIT_ID_HEADER = 'Audit-Id';

export interface AuditorOptions {
  policy: PolicyChecker;
  sink: AuditSink;
  /** A request body decoded as the handlers decode it (JSON, YAML, Protobuf), for requestObject. */
  decodeObject: (body: Buffer, contentType: string | undefined) => unknown;
  /** Milliseconds since the epoch with a fraction: events carry microseconds. */
  now?: () => number;
}

/** Microsecond wall time: Date.now() has whole milliseconds only. */
const preciseNow = (): number => performance.timeOrigin + performance.now();

/** Sets the Audit-Id header of a request that is not audited, as upstream does for every request. */
export function echoAuditId(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['audit-id'];
  const id = typeof given === 'string' && given !== '' ? given : randomUUID();
  res.setHeader(AUDIT_ID_HEADER, id);
  return id;
}

export class Auditor {
  readonly now: () => number;
  constructor(readonly opts: AuditorOptions) {
    this.now = opts.now ?? preciseNow;
  }

  begin(req: IncomingMessage, res: ServerResponse): RequestAudit {
    return new RequestAudit(this, req, res, echoAuditId(req, res), this.now());
  }

  close(): Promise<void> {
    return this.opts.sink.close();
  }
}

const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

export class RequestAudit {
  private decision?: AuditDecision;
  private event?: AuditEvent;
  private longRunning = false;
  /** A failed authentication: one event, when its 401 goes out (upstream's authentication audit). */
  private onlyResponseStarted = false;
  private started = false;
  private completed = false;
  private status?: ResponseStatus;
  private body?: Buffer;
  private bodyApplied = false;
  private response?: (string | Buffer)[];

  constructor(
    private readonly auditor: Auditor,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    readonly auditID: string,
    private readonly receivedAt: number,
  ) {}

  /**
   * The caller is known (undefined: authentication failed, or a public path asked without
   * credentials): the policy decides the level, and RequestReceived is written.
   */
  authenticated(user: UserInfo | undefined, info: RequestInfo, longRunning: boolean, opts: { failed?: boolean } = {}): void {
    const decision = this.auditor.opts.policy.decide({ user, info });
    if (decision.level === 'None') return;
    this.decision = decision;
    this.longRunning = longRunning;
    this.event = {
      kind: 'Event',
      apiVersion: AUDIT_API_VERSION,
      level: decision.level,
      auditID: this.auditID,
      stage: 'RequestReceived',
      requestURI: this.req.url ?? '/',
      verb: info.verb,
      user: user ? auditUser(user) : {},
      sourceIPs: sourceIPs(this.req),
      requestReceivedTimestamp: microTime(this.receivedAt),
      stageTimestamp: '',
    };
    const ua = userAgentOf(this.req);
    if (ua !== undefined) this.event.userAgent = ua;
    if (info.kind === 'resource') this.event.objectRef = objectRefOf(info);
    if (opts.failed) {
      this.onlyResponseStarted = true;
      return;
    }
    this.emit('RequestReceived', this.receivedAt);
    observeRequestBody(this.req, (body) => {
      this.body = body;
    });
    if (this.longRunning) {
      this.onHeaders(() => this.responseStarted());
      this.res.once('close', () => this.complete());
    } else if (levelAtLeast(decision.level, 'RequestResponse')) this.captureResponse();
  }

  /** Anyone may read the public paths; the audit names whoever presented credentials, else anonymous. */
  publicPath(user: UserInfo | undefined, info: RequestInfo): void {
    this.authenticated(user ?? ANONYMOUS, info, false);
  }

  impersonated(user: UserInfo): void {
    if (this.event) this.event.impersonatedUser = auditUser(user);
  }

  /** Upstream's authorization annotations; the reason is the authorizer's own (RBAC gives none). */
  authorized(allowed: boolean, reason: string): void {
    if (!this.event) return;
    this.event.annotations = { ...this.event.annotations, 'authorization.k8s.io/decision': allowed ? 'allow' : 'forbid', 'authorization.k8s.io/reason': reason };
  }

  /** The error Status the request is answered with: upstream keeps its bounded fields. */
  failed(status: Status): void {
    if (!this.event) return;
    this.status = {
      metadata: {},
      status: status.status,
      ...(status.message !== undefined ? { message: status.message } : {}),
      ...(status.reason ? { reason: status.reason } : {}),
      ...(status.details ? { details: status.details } : {}),
      code: status.code,
    };
  }

  /** An error nobody expected (a bug): upstream's Panic stage, in place of ResponseComplete. */
  panicked(message: string): void {
    if (!this.event || this.completed) return;
    this.completed = true;
    this.status = { metadata: {}, status: 'Failure', message: `APIServer panic'd: ${message}`, reason: 'InternalError', code: 500 };
    this.emit('Panic');
  }

  /** The handler returned: a short request is complete; a watch or stream is when its response closes. */
  handlerReturned(): void {
    if (this.onlyResponseStarted) this.responseStarted();
    else if (!this.longRunning) this.complete();
  }

  private responseStarted(): void {
    if (this.started || !this.event) return;
    this.started = true;
    this.emit('ResponseStarted');
  }

  private complete(): void {
    if (this.completed || !this.event) return;
    this.completed = true;
    // Neither a status nor a body went out (the client left first): upstream says so in a faked success.
    if (!this.res.headersSent && !this.status) {
      this.status = { metadata: {}, status: 'Success', message: 'Connection closed early', code: 200 };
      if (this.longRunning) this.responseStarted();
    }
    this.emit('ResponseComplete');
  }

  private emit(stage: Stage, at = this.auditor.now()): void {
    const ev = this.event!;
    ev.stage = stage;
    ev.stageTimestamp = microTime(at);
    if (stage !== 'RequestReceived') {
      ev.responseStatus = this.responseStatus();
      this.applyBodies();
    }
    if (this.decision!.omitStages.has(stage)) return;
    this.auditor.opts.sink.write(ev);
  }

  private responseStatus(): ResponseStatus {
    if (this.status) return { ...this.status };
    return { metadata: {}, code: this.res.statusCode };
  }

  /** Once read, the request body fills what objectRef lacks and, from Request level, is the requestObject. */
  private applyBodies(): void {
    const ev = this.event!;
    const decision = this.decision!;
    if (this.body && !this.bodyApplied) {
      this.bodyApplied = true;
      const obj = this.decodeRequest(this.body);
      if (obj !== undefined && ev.verb !== 'patch') fillObjectRef(ev, obj);
      if (obj !== undefined && levelAtLeast(decision.level, 'Request')) ev.requestObject = decision.omitManagedFields ? withoutManagedFields(obj) : obj;
    }
    if (this.response && this.completed) {
      const obj = parseJson(Buffer.concat(this.response.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))).toString('utf8'));
      this.response = undefined;
      if (obj !== undefined) ev.responseObject = decision.omitManagedFields ? withoutManagedFields(obj) : obj;
    }
  }

  private decodeRequest(body: Buffer): unknown {
    if (body.length === 0) return undefined;
    const type = this.req.headers['content-type'];
    try {
      // A patch is recorded as sent (upstream's LogRequestPatch); apply's YAML as the JSON it stands for.
      if (this.event!.verb === 'patch') return /yaml/i.test(type ?? '') ? yaml().parse(body.toString('utf8')) : JSON.parse(body.toString('utf8'));
      const obj = this.auditor.opts.decodeObject(body, type);
      // Upstream logs the DeleteOptions it decoded, typed as meta.k8s.io/v1 whatever the client sent.
      if ((this.event!.verb === 'delete' || this.event!.verb === 'deletecollection') && typeof obj === 'object' && obj !== null) {
        // The decoder gives every object a metadata; DeleteOptions has none.
        const { kind: _kind, apiVersion: _apiVersion, metadata: _metadata, ...options } = obj as Record<string, unknown>;
        return { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', ...options };
      }
      return obj;
    } catch {
      return undefined;
    }
  }

  /** Calls `fn` when the response's headers go out: watches and streams write them before their body. */
  private onHeaders(fn: () => void): void {
    const res = this.res;
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      const out = (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
      fn();
      return out;
    } as typeof res.writeHead;
  }

  /** Keeps what a JSON answer writes, for responseObject (RequestResponse level). */
  private captureResponse(): void {
    const res = this.res;
    const chunks: (string | Buffer)[] = [];
    this.response = chunks;
    const keep = (chunk: unknown): void => {
      if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) chunks.push(chunk);
    };
    const write = res.write;
    const end = res.end;
    // HTTP/2's end() writes its chunk through write(): kept once.
    let ending = false;
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      if (!ending) keep(chunk);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof res.write;
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      if (typeof chunk !== 'function') keep(chunk);
      ending = true;
      try {
        return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
      } finally {
        ending = false;
      }
    } as typeof res.end;
  }
}

function objectRefOf(info: RequestInfo & { kind: 'resource' }): ObjectReference {
  const { name, namespace } = authorizationScope(info);
  const ref: ObjectReference = { resource: info.resource };
  if (namespace) ref.namespace = namespace;
  if (name) ref.name = name;
  if (info.group) ref.apiGroup = info.group;
  ref.apiVersion = info.version;
  if (info.subresource) ref.subresource = info.subresource;
  return ref;
}

/** As upstream's LogRequestObject: what the object says of itself fills only what the URL left empty. */
function fillObjectRef(ev: AuditEvent, obj: unknown): void {
  const meta = (obj as { metadata?: unknown } | null)?.metadata;
  if (typeof meta !== 'object' || meta === null) return;
  const m = meta as { namespace?: unknown; name?: unknown; uid?: unknown; resourceVersion?: unknown };
  const ref = (ev.objectRef ??= {});
  if (!ref.namespace && typeof m.namespace === 'string' && m.namespace) ref.namespace = m.namespace;
  if (!ref.name && typeof m.name === 'string' && m.name) ref.name = m.name;
  if (!ref.uid && typeof m.uid === 'string' && m.uid) ref.uid = m.uid;
  if (!ref.resourceVersion && typeof m.resourceVersion === 'string' && m.resourceVersion) ref.resourceVersion = m.resourceVersion;
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** omitManagedFields: an object, or each item of a list, without metadata.managedFields. */
function withoutManagedFields(obj: unknown): unknown {
  if (typeof obj !== 'object' || obj === null) return obj;
  const o = obj as { metadata?: { managedFields?: unknown }; items?: unknown[] };
  const out: Record<string, unknown> = { ...o };
  if (o.metadata && 'managedFields' in o.metadata) {
    const { managedFields: _dropped, ...meta } = o.metadata;
    out.metadata = meta;
  }
  if (Array.isArray(o.items)) out.items = o.items.map(withoutManagedFields);
  return out;
}
