// The stored form of an object and the JSON clients get back share one serialization. A write
// encodes the object once for the store; the response to that write and the watch event that
// echoes it are the same text with the resourceVersion put in, instead of a second
// JSON.stringify of the same object (and, in the watch cache, a JSON.parse of the stored text).
import type { KubeObject } from '../api/types.js';

/** Stored objects open with their metadata, so the resourceVersion goes in without a parse. */
const OPENING = '{"metadata":{';

/** The stored text of objects as they were written, for as long as the object lives. */
const storedText = new WeakMap<KubeObject, string>();

/**
 * The stored form: metadata first, without resourceVersion (the store's revision is the truth).
 * Remembered for `obj`, which must not change after this but for its resourceVersion.
 */
export function encodeStored(obj: KubeObject): string {
  const { resourceVersion: _rv, ...meta } = obj.metadata ?? {};
  // metadata is the first key of the copy (a spread keeps the position of a key already there).
  const copy: Record<string, unknown> = { metadata: meta };
  Object.assign(copy, obj);
  copy.metadata = meta;
  const text = JSON.stringify(copy);
  storedText.set(obj, text);
  return text;
}

/**
 * `obj` as JSON: from the text it was stored as when it is an object just written (or its echo
 * in the watch cache), otherwise serialized.
 */
export function objectJson(obj: KubeObject): string {
  const text = storedText.get(obj);
  const rv = obj.metadata?.resourceVersion;
  if (text === undefined || rv === undefined || !text.startsWith(OPENING) || text[OPENING.length] === '}') return JSON.stringify(obj);
  return `${OPENING}"resourceVersion":${JSON.stringify(rv)},${text.slice(OPENING.length)}`;
}

/**
 * An object that is no longer the current version (it only lives on in the watch window): its
 * text goes, as a watch resuming from that far back is rare and may serialize it again.
 */
export function forgetStoredText(obj: KubeObject): void {
  storedText.delete(obj);
}
