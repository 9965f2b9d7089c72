// Serves /api/v1/... and /apis/<group>/<version>/...: every verb and subresource of every resource.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceType } from '../api/resource.js';
import type { KubeObject } from '../api/types.js';
import { apiVersionOf } from '../api/types.js';
import { deepClone } from '../api/kinds/json.js';
import { StatusError, badRequest, methodNotAllowed, notFound, notFoundPath } from '../api/errors.js';
import type { Clock } from '../util/clock.js';
import { upgradeOf, type Upgrade } from '../util/upgrade.js';
import type { ResourceRequest } from './http/request-info.js';
import { checkTypeMeta, unrecognizedBody } from './type-meta.js';
import { UndecodableBody, asObject, decodeObjectBody, decodePatchBody, patchTypeOf, readBody, sendJson, sendJsonStream, warningHeader, type PatchType } from './http/codec.js';
import { typedListParts } from './stored-json.js';
import { includeObjectParam, negotiate, shapeList, shapeObject } from './http/negotiate.js';
import { serveWatch } from './http/watch-stream.js';
import type { WatchTerms } from './watch-session.js';
import { buildFilter } from './filters.js';
import { keyPrefix, nowRfc3339, type ListOptions, type ObjectStore } from './object-store.js';
import { deleteOptions, dryRunParam, fieldValidationParam, intParam } from './query.js';
import { queryBool } from '../api/query-params.js';
import { managerFromUserAgent, type UserInfo, type WriteContext } from './request-context.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, applyServerSide } from './patch/index.js';
import { applyScale, scaleOf } from './subresources/scale.js';
import { bindPod } from './subresources/binding.js';
import { evictPod } from './subresources/eviction.js';
import { requestToken } from './subresources/token-request.js';
import { jsonTypeError, metadataTypeError } from './protobuf/json-types.js';
import type { ServiceAccountTokens } from '../auth/service-account-tokens.js';
import { knownFieldsOf, unknownFields } from '../api/field-validation.js';

export interface PodLogStreamer {
  stream(pod: KubeObject, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** pods/exec, pods/attach, pods/portforward: an upgraded connection relayed to the pod's node. */
export interface PodStreamer {
  connect(pod: KubeObject, subresource: 'exec' | 'attach' | 'portforward', query: URLSearchParams, req: IncomingMessage, res: ServerResponse, up: Upgrade): Promise<void>;
}

/** nodes/<name>/proxy/<path>: a GET passed to the node's agent. */
export interface NodeProxy {
  proxy(node: KubeObject, path: string, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export interface ResourceHandlerDeps {
  clock: Clock;
  typeFor(group: string, version: string, resource: string): ResourceType | undefined;
  storeFor(rt: ResourceType): ObjectStore;
  storeByResource(group: string, resource: string): ObjectStore;
  /** Indexed watch fields per resource (pods: spec.nodeName). */
  indexedFields(rt: ResourceType): string[];
  podLogs?: PodLogStreamer;
  podStreams?: PodStreamer;
  nodeProxy?: NodeProxy;
  watchBookmarkIntervalMs: number;
  /** Watches without timeoutSeconds last between this and twice this, as upstream's --min-request-timeout. */
  minRequestTimeoutMs: number;
  /** Issues serviceaccounts/token; undefined until the server has loaded its signing key. */
  serviceAccountTokens?: () => ServiceAccountTokens | undefined;
}

const NOT_FOUND_PATH = notFoundPath;

/**
 * Subresources upstream serves that skiff does not yet, each with why: a client that asks is told
 * the limitation (405, as upstream answers an action a resource does not support), not a NotFound
 * it would read as a missing pod.
 */
const NOT_SERVED_YET: Record<string, string> = {
  '/pods/proxy': "pods share their node's network, so a pod's ports are reached on the node's address directly",
  '/services/proxy': 'nothing routes Service addresses (there is no kube-proxy); reach the pods behind a Service on their nodes directly',
};


export class ResourceHandler {
  constructor(private readonly deps: ResourceHandlerDeps) {}

  async handle(req: IncomingMessage, res: ServerResponse, info: ResourceRequest, query: URLSearchParams, user: UserInfo): Promise<void> {
    const rt = this.deps.typeFor(info.group, info.version, info.resource);
    if (!rt) throw NOT_FOUND_PATH();
    if (rt.namespaced && info.name && info.namespace === undefined) throw NOT_FOUND_PATH();
    if (!rt.namespaced && info.namespace !== undefined) throw NOT_FOUND_PATH();
    if (rt.namespaced && info.verb === 'create' && info.namespace === undefined) throw NOT_FOUND_PATH();
    const store = this.deps.storeFor(rt);
    const ctx: WriteContext = {
      user,
      fieldManager: query.get('fieldManager') || managerFromUserAgent(req.headers['user-agent']),
      dryRun: dryRunParam(query),
      fieldValidation: fieldValidationParam(query),
      // A deprecated version of a custom resource says so on every request.
      warnings: rt.warnings ? [...rt.warnings] : [],
    };
    // Answers that carry no warnings of their own (reads, watches, errors) still carry these.
    if (rt.warnings) res.setHeader('Warning', warningHeader(rt.warnings));
    if (ctx.fieldManager.length > 128) throw badRequest('fieldManager: Too long: may not be more than 128 bytes');
    try {
      await this.serveVerb(req, res, rt, store, info, query, ctx);
    } catch (e) {
      // A refused write still tells the client what admission warned of (a webhook's warnings), as upstream's.
      if (ctx.warnings.length > 0 && !res.headersSent) res.setHeader('Warning', warningHeader(ctx.warnings));
      throw e;
    }
  }

  private async serveVerb(req: IncomingMessage, res: ServerResponse, rt: ResourceType, store: ObjectStore, info: ResourceRequest, query: URLSearchParams, ctx: WriteContext): Promise<void> {
    const accept = req.headers.accept;
    if (info.subresource) return this.subresource(req, res, rt, store, info, query, ctx);

    switch (info.verb) {
      case 'get': {
        const obj = await store.get(info.namespace, info.name!);
        return sendJson(res, 200, shapeObject(rt, obj, negotiate(accept), this.deps.clock.now(), includeObjectParam(query)));
      }
      case 'list': {
        const list = await store.list(info.namespace, this.listOptions(rt, info, query));
        const shape = negotiate(accept);
        // The common list (JSON objects) is spliced from the items' stored text, not serialized again.
        if (shape === 'object') return sendJsonStream(req, res, 200, typedListParts(list, rt.listItemsKeepType === true));
        return sendJson(res, 200, shapeList(rt, list, shape, this.deps.clock.now(), includeObjectParam(query)));
      }
      case 'watch':
        return this.watch(req, res, rt, store, info, query);
      case 'create': {
        const obj = await this.readObject(req, rt, ctx);
        // As upstream's storage: an object that still names a version of something that existed
        // (an export applied after the original was deleted) is not silently made new.
        const rv = obj.metadata?.resourceVersion;
        if (rv && rv !== '0') throw badRequest('resourceVersion should not be set on objects to be created');
        const created = await store.create(info.namespace, obj, ctx);
        return sendJson(res, 201, created, { warnings: ctx.warnings });
      }
      case 'update': {
        const obj = await this.readObject(req, rt, ctx, store.cached(info.namespace, info.name!));
        // A retry (the write started from a watch cache that was behind) needs the body as sent again.
        const updated = await store.update(info.namespace, info.name!, () => deepClone(obj), ctx);
        return sendJson(res, 200, updated, { warnings: ctx.warnings });
      }
      case 'patch':
        return this.patch(req, res, rt, store, info, query, ctx);
      case 'delete': {
        const body = await this.readOptionalJson(req);
        const opts = deleteOptions(query, body);
        const result = await store.delete(info.namespace, info.name!, opts, { ...ctx, dryRun: ctx.dryRun || opts.dryRun });
        return sendJson(res, 200, result.body, { warnings: ctx.warnings });
      }
      case 'deletecollection': {
        const body = await this.readOptionalJson(req);
        const opts = deleteOptions(query, body);
        const filter = buildFilter(rt, { namespace: info.namespace, labelSelector: query.get('labelSelector'), fieldSelector: query.get('fieldSelector') }, []);
        const list = await store.list(info.namespace, { filter });
        const deleted: KubeObject[] = [];
        for (const item of list.items) {
          try {
            const r = await store.delete(item.metadata.namespace, item.metadata.name!, opts, { ...ctx, dryRun: ctx.dryRun || opts.dryRun });
            // Kinds whose DELETE answers with a Status still list the object itself here.
            deleted.push(r.body.kind === 'Status' ? item : (r.body as KubeObject));
          } catch (e) {
            if (!(e instanceof StatusError && e.code === 404)) throw e;
          }
        }
        return sendJson(res, 200, { apiVersion: apiVersionOf(rt.group, rt.version), kind: rt.listKind, metadata: { resourceVersion: list.metadata.resourceVersion }, items: deleted });
      }
    }
  }

  /** A list request's options, from its query. */
  listOptions(rt: ResourceType, info: ResourceRequest, query: URLSearchParams): ListOptions {
    const filter = buildFilter(rt, { namespace: info.namespace, labelSelector: query.get('labelSelector'), fieldSelector: query.get('fieldSelector') }, this.deps.indexedFields(rt));
    const limit = intParam(query, 'limit');
    return {
      filter,
      ...(limit !== undefined ? { limit } : {}),
      ...(query.get('continue') ? { continueToken: query.get('continue')! } : {}),
      ...(query.get('resourceVersion') !== null ? { resourceVersion: query.get('resourceVersion')! } : {}),
      ...(query.get('resourceVersionMatch') ? { resourceVersionMatch: query.get('resourceVersionMatch')! } : {}),
    };
  }

  /** A watch request's terms, from its query, once the cache has caught up with what it asks for. */
  async watchTerms(rt: ResourceType, store: ObjectStore, info: ResourceRequest, query: URLSearchParams): Promise<WatchTerms> {
    const filter = buildFilter(
      rt,
      { namespace: info.namespace, labelSelector: query.get('labelSelector'), fieldSelector: query.get('fieldSelector'), name: info.name },
      this.deps.indexedFields(rt),
    );
    const rvParam = query.get('resourceVersion');
    const sendInitial = queryBool(query, 'sendInitialEvents');
    let fromRv: number | undefined;
    if (rvParam && rvParam !== '0' && !sendInitial) {
      fromRv = Number(rvParam);
      if (!Number.isInteger(fromRv) || fromRv < 0) throw badRequest(`invalid resource version: ${JSON.stringify(rvParam)}`);
    }
    await store.cache.whenReady();
    if (fromRv !== undefined) await store.cache.waitForRevision(fromRv, 3000);
    if (sendInitial && rvParam) await store.cache.waitForRevision(Number(rvParam) || 0, 3000);
    const timeoutSeconds = intParam(query, 'timeoutSeconds');
    return {
      filter,
      keyPrefix: keyPrefix(rt, info.namespace),
      fromRv,
      timeoutMs: timeoutSeconds && timeoutSeconds > 0 ? timeoutSeconds * 1000 : this.deps.minRequestTimeoutMs * (1 + Math.random()),
      bookmarks: queryBool(query, 'allowWatchBookmarks'),
      bookmarkIntervalMs: this.deps.watchBookmarkIntervalMs,
      sendInitialEventsEnd: sendInitial && queryBool(query, 'allowWatchBookmarks'),
    };
  }

  private async watch(req: IncomingMessage, res: ServerResponse, rt: ResourceType, store: ObjectStore, info: ResourceRequest, query: URLSearchParams): Promise<void> {
    const terms = await this.watchTerms(rt, store, info, query);
    serveWatch(req, res, {
      rt,
      cache: store.cache,
      ...terms,
      shape: negotiate(req.headers.accept),
      ...(includeObjectParam(query) ? { include: includeObjectParam(query)! } : {}),
      now: () => this.deps.clock.now(),
      ...(store.conversion ? { convert: async (o: KubeObject) => (await store.served([o]))[0]! } : {}),
    });
  }

  /** Reads a full object body, checking its kind/apiVersion and (per fieldValidation) its fields. */
  /** The request's object, decoded and checked; `live` is the object it replaces, if any. */
  private async readObject(req: IncomingMessage, rt: ResourceType, ctx: WriteContext, live?: KubeObject): Promise<KubeObject> {
    const body = await readBody(req);
    let obj: KubeObject;
    try {
      obj = decodeObjectBody(body, req.headers['content-type']);
    } catch (e) {
      throw e instanceof UndecodableBody ? unrecognizedBody(rt, e.cause, body) : e;
    }
    checkTypeMeta(obj, rt, this.deps.typeFor);
    this.checkFields(obj, rt, ctx, live);
    return obj;
  }

  /**
   * Unknown fields anywhere in the object, per fieldValidation: Strict refuses them, Warn warns.
   * Otherwise they are dropped, as upstream's decoding into Go structs drops them. `live`: for a
   * patch result, the object it was made from; unknown fields that one already had (stored before
   * skiff checked nested fields) are not the patch's fault.
   */
  private checkFields(obj: KubeObject, rt: ResourceType, ctx: WriteContext, live?: KubeObject): void {
    const unknown = rt.pruneUnknownFields ? this.unknownCustomFields(obj, rt, live) : this.unknownBuiltinFields(obj, rt, ctx, live);
    if (unknown.length === 0) return;
    if (ctx.fieldValidation === 'Strict') {
      const list = unknown.map((f) => `unknown field "${f}"`).join(', ');
      throw badRequest(`${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: strict decoding error: ${list}`);
    }
    if (ctx.fieldValidation !== 'Warn') return;
    for (const f of unknown) {
      // A patch may be applied more than once (conflict retries): warn once.
      const w = `unknown field "${f}"`;
      if (!ctx.warnings.includes(w)) ctx.warnings.push(w);
    }
  }

  /** A custom kind's unknown fields, pruned as upstream prunes them; its metadata is still ObjectMeta, typed as Go types it. */
  private unknownCustomFields(obj: KubeObject, rt: ResourceType, live: KubeObject | undefined): string[] {
    const typeError = metadataTypeError(obj as unknown as Record<string, unknown>, rt.kind);
    if (typeError && !(live && metadataTypeError(live as unknown as Record<string, unknown>, rt.kind) === typeError)) throw badRequest(`${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${typeError}`);
    return rt.pruneUnknownFields!(obj);
  }

  /**
   * A built-in kind's unknown fields: those its messages lack, dropped unless fieldValidation is
   * Strict. Values of the wrong type are refused whatever fieldValidation says, as Go's decoder
   * refuses them.
   */
  private unknownBuiltinFields(obj: KubeObject, rt: ResourceType, ctx: WriteContext, live: KubeObject | undefined): string[] {
    const apiVersion = apiVersionOf(rt.group, rt.version);
    const typeError = jsonTypeError(obj as unknown as Record<string, unknown>, apiVersion, rt.kind);
    // A value stored before these checks existed is the live object's, not this writer's: status
    // writers and label edits of such an object must keep working.
    if (typeError && !(live && jsonTypeError(live as unknown as Record<string, unknown>, apiVersion, rt.kind) === typeError)) throw badRequest(`${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${typeError}`);
    const known = knownFieldsOf(rt);
    const found = unknownFields(obj, known, { prune: ctx.fieldValidation !== 'Strict' });
    if (found.length === 0) return found;
    const inherited = live ? new Set(unknownFields(live, known)) : undefined;
    return inherited ? found.filter((p) => !inherited.has(p)) : found;
  }

  private async readOptionalJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
    const body = await readBody(req);
    if (body.length === 0) return undefined;
    return asObject(decodeObjectBody(body, req.headers['content-type'])) as unknown as Record<string, unknown>;
  }

  private async patch(req: IncomingMessage, res: ServerResponse, rt: ResourceType, store: ObjectStore, info: ResourceRequest, query: URLSearchParams, ctx: WriteContext): Promise<void> {
    const type = patchTypeOf(req.headers['content-type']);
    if (type === 'strategic' && rt.refusesStrategicMerge) {
      throw new StatusError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    }
    const patchBody = decodePatchBody(await readBody(req), type);
    const gvk = rt;
    if (type === 'apply') {
      const applied = asObject(patchBody);
      checkTypeMeta(applied, rt, this.deps.typeFor);
      if (applied.apiVersion === undefined || applied.kind === undefined) {
        throw badRequest('apiVersion and kind must be set in the applied configuration');
      }
      if (applied.metadata.name !== undefined && applied.metadata.name !== info.name) {
        throw badRequest(`the name of the object (${applied.metadata.name}) does not match the name on the URL (${info.name})`);
      }
      this.checkFields(applied, rt, ctx);
      if (!query.get('fieldManager')) throw badRequest('PATCH with apply requires a fieldManager parameter');
      const force = queryBool(query, 'force');
      const now = nowRfc3339(this.deps.clock);
      const live = await store.tryGet(info.namespace, info.name!);
      if (!live && !info.subresource) {
        const { object } = applyServerSide(undefined, { ...applied, metadata: { ...applied.metadata, name: info.name! } }, { manager: ctx.fieldManager, force, gvk, now });
        const created = await store.create(info.namespace, object, { ...ctx, managedFieldsSet: true });
        return sendJson(res, 201, created, { warnings: ctx.warnings });
      }
      const sub = info.subresource ? { subresource: info.subresource } : {};
      const updated = await store.update(info.namespace, info.name!, (cur) => applyServerSide(cur, applied, { manager: ctx.fieldManager, force, gvk, now, ...sub }).object, { ...ctx, managedFieldsSet: true }, {
        preconditionRv: () => applied.metadata.resourceVersion,
        ...(info.subresource ? { subresource: info.subresource } : {}),
      });
      return sendJson(res, 200, updated, { warnings: ctx.warnings });
    }
    const updated = await store.update(
      info.namespace,
      info.name!,
      (cur, live) => {
        const next = applyPatch(type, cur, patchBody, gvk);
        this.checkFields(next, rt, ctx, live);
        return next;
      },
      ctx,
      {
        preconditionRv: () => resourceVersionInPatch(type, patchBody),
        ...(info.subresource ? { subresource: info.subresource } : {}),
      },
    );
    return sendJson(res, 200, updated, { warnings: ctx.warnings });
  }

  /** What the agent serves read-only (/metrics, /healthz, /containerLogs/...), as the kubelet proxy upstream. */
  private async proxyToNode(req: IncomingMessage, res: ServerResponse, store: ObjectStore, info: ResourceRequest, query: URLSearchParams): Promise<void> {
    if (info.verb !== 'get') throw methodNotAllowed(`nodes/proxy passes only GET to the node agent, which serves nothing else`);
    const node = await store.get(undefined, info.name!);
    return this.deps.nodeProxy!.proxy(node, proxiedPath(req.url ?? '/', info.name!), query, req, res);
  }

  private async subresource(req: IncomingMessage, res: ServerResponse, rt: ResourceType, store: ObjectStore, info: ResourceRequest, query: URLSearchParams, ctx: WriteContext): Promise<void> {
    const sub = info.subresource!;
    if (rt.group === '' && rt.resource === 'nodes' && sub === 'proxy' && info.name && this.deps.nodeProxy) return this.proxyToNode(req, res, store, info, query);
    const supported = rt.subresources.includes(sub as never);
    const unserved = info.name ? NOT_SERVED_YET[`${rt.group}/${rt.resource}/${sub}`] : undefined;
    if (unserved) throw methodNotAllowed(`${rt.resource}/${sub} is not served by skiff yet: ${unserved}`);
    if (!supported || !info.name) throw NOT_FOUND_PATH();
    const now = this.deps.clock.now();
    switch (sub) {
      case 'status':
      case 'approval':
      case 'finalize': {
        if (info.verb === 'get') return sendJson(res, 200, await store.get(info.namespace, info.name));
        if (info.verb === 'update') {
          const obj = await this.readObject(req, rt, ctx, store.cached(info.namespace, info.name));
          if (sub === 'finalize') {
            const updated = await store.update(info.namespace, info.name, (cur) => ({ ...cur, spec: { ...((cur.spec as object) ?? {}), finalizers: ((obj.spec ?? {}) as { finalizers?: string[] }).finalizers ?? [] } }), ctx, {
              subresource: 'finalize',
              preconditionRv: () => obj.metadata.resourceVersion,
            });
            return sendJson(res, 200, updated);
          }
          return sendJson(res, 200, await store.update(info.namespace, info.name, () => deepClone(obj), ctx, { subresource: sub }), { warnings: ctx.warnings });
        }
        if (info.verb === 'patch' && sub !== 'finalize') return this.patch(req, res, rt, store, info, query, ctx);
        throw methodNotAllowed();
      }
      case 'scale': {
        if (info.verb === 'get') return sendJson(res, 200, scaleOf(await store.get(info.namespace, info.name), rt));
        if (info.verb === 'update') {
          const body = decodeObjectBody(await readBody(req), req.headers['content-type']);
          const updated = await store.update(info.namespace, info.name, (cur) => applyScale(cur, body, rt), ctx, {
            subresource: 'scale',
            preconditionRv: () => body.metadata.resourceVersion,
          });
          return sendJson(res, 200, scaleOf(updated, rt));
        }
        if (info.verb === 'patch') {
          const type = patchTypeOf(req.headers['content-type']);
          const patchBody = decodePatchBody(await readBody(req), type);
          const scaleGvk = { group: 'autoscaling', version: 'v1', kind: 'Scale' };
          const updated = await store.update(
            info.namespace,
            info.name,
            (cur) => {
              const scale = scaleOf(cur, rt);
              const patched = type === 'apply' ? applyMergePatch(scale, patchBody) : applyPatch(type, scale, patchBody, scaleGvk);
              return applyScale(cur, asObject(patched), rt);
            },
            ctx,
            { subresource: 'scale', preconditionRv: () => resourceVersionInPatch(type, patchBody) },
          );
          return sendJson(res, 200, scaleOf(updated, rt));
        }
        throw methodNotAllowed();
      }
      case 'binding': {
        if (info.verb !== 'create') throw methodNotAllowed();
        const binding = decodeObjectBody(await readBody(req), req.headers['content-type']);
        await store.update(info.namespace, info.name, (cur) => bindPod(cur, binding, nowRfc3339(this.deps.clock)), { ...ctx, fieldManager: ctx.fieldManager }, { subresource: 'binding', preconditionRv: () => undefined });
        return sendJson(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
      }
      case 'eviction': {
        if (info.verb !== 'create') throw methodNotAllowed();
        const eviction = decodeObjectBody(await readBody(req), req.headers['content-type']);
        const result = await evictPod(store, this.deps.storeByResource('policy', 'poddisruptionbudgets'), info.namespace!, info.name, eviction, ctx, () => this.deps.clock.now());
        return sendJson(res, 201, result);
      }
      case 'token': {
        if (info.verb !== 'create') throw methodNotAllowed();
        const tokens = this.deps.serviceAccountTokens?.();
        if (!tokens) throw badRequest('service-account tokens are not issued by this server');
        const account = await store.get(info.namespace, info.name);
        const body = decodeObjectBody(await readBody(req), req.headers['content-type']);
        return sendJson(res, 201, await requestToken(tokens, account, body));
      }
      case 'exec':
      case 'attach':
      case 'portforward': {
        if (info.verb !== 'get' && info.verb !== 'create') throw methodNotAllowed();
        const up = upgradeOf(req);
        if (!up) throw badRequest('Upgrade request required');
        const pod = await store.get(info.namespace, info.name);
        if (!this.deps.podStreams) throw badRequest(`pods/${sub} is not available from this server`);
        return this.deps.podStreams.connect(pod, sub, query, req, res, up);
      }
      case 'log': {
        if (info.verb !== 'get') throw methodNotAllowed();
        const pod = await store.get(info.namespace, info.name);
        if (!this.deps.podLogs) throw badRequest('pod logs are not available from this server');
        return this.deps.podLogs.stream(pod, query, req, res);
      }
      default:
        void now;
        throw NOT_FOUND_PATH();
    }
  }
}

/** The path after /nodes/<name>/proxy in a request URL ("/metrics"), "/" when none. */
export function proxiedPath(url: string, name: string): string {
  const path = new URL(url, 'https://localhost').pathname;
  const marker = `/nodes/${encodeURIComponent(name)}/proxy`;
  const at = path.indexOf(marker);
  return at < 0 ? '/' : path.slice(at + marker.length) || '/';
}

/** `current` is the caller's own copy, which a merge patch changes in place. */
function applyPatch(type: Exclude<PatchType, 'apply'>, current: KubeObject, patch: unknown, gvk: { group: string; version: string; kind: string }): KubeObject {
  let out: unknown;
  switch (type) {
    case 'json':
      out = applyJsonPatch(current, patch);
      break;
    case 'merge':
      out = applyMergePatch(current, patch, { inPlace: true });
      break;
    case 'strategic':
      out = applyStrategicMergePatch(current, patch, gvk);
      break;
  }
  return asObject(out);
}

/** A patch that names a resourceVersion is a precondition, as upstream treats it. */
function resourceVersionInPatch(type: PatchType, patch: unknown): string | undefined {
  if (type === 'json') {
    if (!Array.isArray(patch)) return undefined;
    for (const op of patch as { op?: string; path?: string; value?: unknown }[]) {
      if (op && (op.op === 'replace' || op.op === 'add' || op.op === 'test') && op.path === '/metadata/resourceVersion' && typeof op.value === 'string') return op.value;
    }
    return undefined;
  }
  const meta = (patch as { metadata?: { resourceVersion?: unknown } } | null)?.metadata;
  return typeof meta?.resourceVersion === 'string' ? meta.resourceVersion : undefined;
}

export { notFound };
