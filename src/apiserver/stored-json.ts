// The stored form of an object and the JSON clients get back share one serialization. A write
// encodes the object once for the store; the response to that write, the watch event that echoes
// it and every list that holds it are the same text with the resourceVersion put in, instead of
// a JSON.stringify of the same object each time (a list of 500 pods was 500 of them, per list).
//
// Stored text opens with kind, apiVersion and metadata, in upstream's order, so the
// resourceVersion goes in — and, for a list item, kind and apiVersion come out — without a parse:
//   {"kind":"Pod","apiVersion":"v1","metadata":{"name":…},"spec":…}
// Text stored by earlier versions opens with metadata ({"metadata":{…},…}); it is still read, and
// answered the same way for whole objects.
import type { KubeList, KubeObject } from '../api/types.js';

/** The opening of text written by earlier versions (metadata first). */
const METADATA_OPENING = '{"metadata":{';

/** The stored text of objects as they were written or read, for as long as the object lives. */
const storedText = new WeakMap<KubeObject, string>();

function typeOpening(obj: KubeObject): string | undefined {
  if (typeof obj.kind !== 'string' || typeof obj.apiVersion !== 'string') return undefined;
  return `{"kind":${JSON.stringify(obj.kind)},"apiVersion":${JSON.stringify(obj.apiVersion)},"metadata":{`;
}

/**
 * The stored form: kind, apiVersion, then metadata without resourceVersion (the store's revision
 * is the truth), then the rest. Remembered for `obj`, which must not change after this but for
 * its resourceVersion.
 */
export function encodeStored(obj: KubeObject): string {
  const { resourceVersion: _rv, ...meta } = obj.metadata ?? {};
  const typed = typeOpening(obj) !== undefined;
  // Keys keep the position they are first given: these first, then the object's own in its order.
  const copy: Record<string, unknown> = typed ? { kind: obj.kind, apiVersion: obj.apiVersion, metadata: meta } : { metadata: meta };
  Object.assign(copy, obj);
  copy.metadata = meta;
  const text = JSON.stringify(copy);
  storedText.set(obj, text);
  return text;
}

/**
 * Remembers `text` as what `obj` was parsed from (the watch cache's objects), so answering it
 * needs no serialization. Only for objects served exactly as stored.
 */
export function rememberStoredText(obj: KubeObject, text: string): void {
  storedText.set(obj, text);
}

/** Where the metadata's fields start in `obj`'s stored text, if the text is one this module can splice. */
function metadataStart(obj: KubeObject, text: string): number | undefined {
  const typed = typeOpening(obj);
  let at: number | undefined;
  if (typed !== undefined && text.startsWith(typed)) at = typed.length;
  else if (text.startsWith(METADATA_OPENING)) at = METADATA_OPENING.length;
  // An empty metadata object has nothing to put a comma after.
  return at !== undefined && text[at] !== '}' ? at : undefined;
}

/**
 * `obj` as JSON: from the text it was stored as when it is an object just written or read from
 * storage, otherwise serialized.
 */
export function objectJson(obj: KubeObject): string {
  const text = storedText.get(obj);
  const rv = obj.metadata?.resourceVersion;
  const at = text === undefined || rv === undefined ? undefined : metadataStart(obj, text);
  if (at === undefined) return JSON.stringify(obj);
  return `${text!.slice(0, at)}"resourceVersion":${JSON.stringify(rv)},${text!.slice(at)}`;
}

/** `obj` as an item of a typed list: as upstream's built-in lists carry them, without kind and apiVersion. */
export function listItemJson(obj: KubeObject): string {
  const text = storedText.get(obj);
  const rv = obj.metadata?.resourceVersion;
  const typed = typeOpening(obj);
  if (text !== undefined && rv !== undefined && typed !== undefined && text.startsWith(typed) && text[typed.length] !== '}') {
    return `${METADATA_OPENING}"resourceVersion":${JSON.stringify(rv)},${text.slice(typed.length)}`;
  }
  const { kind: _k, apiVersion: _a, ...rest } = obj;
  return JSON.stringify(rest);
}

/**
 * A list (PodList, …) as JSON, in pieces to send one after another; its items spliced from their
 * stored text. Items of a built-in kind's list carry no kind and apiVersion, as upstream's typed
 * lists; a custom resource's keep them (`keepItemTypes`), as upstream's unstructured lists do.
 */
export function* typedListParts(list: KubeList, keepItemTypes = false): Generator<string> {
  const head = JSON.stringify({ kind: list.kind, apiVersion: list.apiVersion, metadata: list.metadata });
  const item = keepItemTypes ? objectJson : listItemJson;
  yield `${head.slice(0, -1)},"items":[`;
  for (let i = 0; i < list.items.length; i++) yield i === 0 ? item(list.items[i]!) : `,${item(list.items[i]!)}`;
  yield ']}';
}

/** A list as one JSON text. */
export function typedListJson(list: KubeList, keepItemTypes = false): string {
  return [...typedListParts(list, keepItemTypes)].join('');
}

/**
 * An object that is no longer the current version (it only lives on in the watch window): its
 * text goes, as a watch resuming from that far back is rare and may serialize it again.
 */
export function forgetStoredText(obj: KubeObject): void {
  storedText.delete(obj);
}
