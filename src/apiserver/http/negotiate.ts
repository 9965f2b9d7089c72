// Response shapes a client may ask for through Accept: plain JSON, a Table (kubectl get), or
// metadata only (PartialObjectMetadata, used by garbage collectors and `kubectl get -o name`).
import type { ResourceType } from '../../api/resource.js';
import type { KubeList, KubeObject, ListMeta } from '../../api/types.js';
import { notAcceptable } from '../../api/errors.js';

export type ResponseShape = 'object' | 'table' | 'metadata';

export function negotiate(accept: string | undefined): ResponseShape {
  if (!accept) return 'object';
  const ranges = accept.split(',').map((r) => r.trim().toLowerCase());
  for (const r of ranges) {
    const params = new Map(r.split(';').slice(1).map((p) => p.trim().split('=') as [string, string]));
    const as = params.get('as');
    if (as === 'table' && params.get('g') === 'meta.k8s.io') return 'table';
    if ((as === 'partialobjectmetadata' || as === 'partialobjectmetadatalist') && params.get('g') === 'meta.k8s.io') return 'metadata';
    if (!as) {
      const type = r.split(';')[0]!;
      if (type === 'application/json' || type === '*/*' || type === 'application/*' || type === 'application/yaml') return 'object';
    }
  }
  if (ranges.some((r) => r.startsWith('application/vnd.kubernetes.protobuf'))) {
    throw notAcceptable('only the following media types are accepted: application/json, application/yaml');
  }
  return 'object';
}

function partialMetadata(obj: KubeObject): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** What a Table's rows carry of each object (?includeObject=), when the client says. */
export function includeObjectParam(q: URLSearchParams): IncludeObject | undefined {
  const v = q.get('includeObject');
  return v === 'None' || v === 'Metadata' || v === 'Object' ? v : undefined;
}

/** A Table row's object as `include` asks: none, its metadata (the default) or the whole object. */
export function tableRowObject(obj: KubeObject, include: IncludeObject = 'Metadata'): KubeObject | undefined {
  return include === 'Object' ? obj : include === 'Metadata' ? partialMetadata(obj) : undefined;
}

export function tableOf(rt: ResourceType, items: KubeObject[], listMeta: ListMeta, now: number, include: IncludeObject = 'Metadata'): unknown {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: rt.table.columns,
    rows: items.map((o) => {
      const row: Record<string, unknown> = { cells: safeCells(rt, o, now) };
      const object = tableRowObject(o, include);
      if (object) row.object = object;
      return row;
    }),
  };
}

/** A printer bug must not turn into a failed `kubectl get`: degrade to the name and blanks. */
function safeCells(rt: ResourceType, obj: KubeObject, now: number): unknown[] {
  try {
    return rt.table.cells(obj, now);
  } catch {
    return rt.table.columns.map((c, i) => (i === 0 ? obj.metadata.name ?? '' : c.type === 'integer' ? 0 : '<unknown>'));
  }
}

export function shapeObject(rt: ResourceType, obj: KubeObject, shape: ResponseShape, now: number, include?: IncludeObject): unknown {
  if (shape === 'table') return tableOf(rt, [obj], { resourceVersion: obj.metadata.resourceVersion ?? '' }, now, include);
  if (shape === 'metadata') return partialMetadata(obj);
  return obj;
}

export function shapeList(rt: ResourceType, list: KubeList, shape: ResponseShape, now: number, include?: IncludeObject): unknown {
  if (shape === 'table') return tableOf(rt, list.items, list.metadata, now, include);
  if (shape === 'metadata') {
    return { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: list.metadata, items: list.items.map(partialMetadata) };
  }
  // Items of a typed list carry no kind/apiVersion on the real server.
  return { ...list, items: list.items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest) };
}
