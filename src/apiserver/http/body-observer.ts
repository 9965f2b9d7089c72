// Who else reads a request's body once a handler has read it: the audit log records it as the
// request object. Kept beside the request, as upstream keeps its audit context in the request's
// context, so no handler passes it along.
import type { IncomingMessage } from 'node:http';

const observers = new WeakMap<IncomingMessage, (body: Buffer) => void>();

export function observeRequestBody(req: IncomingMessage, observer: (body: Buffer) => void): void {
  observers.set(req, observer);
}

/** Called by readBody with the whole body. */
export function requestBodyRead(req: IncomingMessage, body: Buffer): void {
  observers.get(req)?.(body);
}
