// Reading request bodies (JSON, YAML, Protobuf) and writing JSON responses.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { finished } from 'node:stream';
import YAML from 'yaml';
import type { KubeObject, Status } from '../../api/types.js';
import { StatusError, badRequest, requestEntityTooLarge, unsupportedMediaType } from '../../api/errors.js';
import { decodeProtobufObject } from '../protobuf/decode.js';
import { objectJson } from '../stored-json.js';
import { abortResponse, clientGone, streamClosedEarly } from './listener.js';
import { requestBodyRead } from './body-observer.js';

/** Upstream's limit for request bodies (3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) {
    req.resume();
    return Promise.reject(requestEntityTooLarge(limit));
  }
  // Stream events rather than an async iterator per request, which cost more than the rest of
  // reading it. finished() also settles for a request that ended or broke before we got here.
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let stopWatching = (): void => {};
    const settle = (err?: Error): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      stopWatching();
      if (err) return reject(err);
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      requestBodyRead(req, body);
      resolve(body);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        settle(requestEntityTooLarge(limit));
        req.resume();
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    // Nobody is left to answer when the client goes mid-body: its error, not the server's.
    // An HTTP/2 client that resets its stream mid-upload ends the compat request as if it were
    // complete: a cut-off body must not pass for a whole one.
    // A body shorter than its declared length is cut off too, whatever the transport made of it.
    const cutOff = (): boolean => streamClosedEarly(req) || (req.headers['content-length'] !== undefined && size !== declared);
    stopWatching = finished(req, (err) => settle(err || cutOff() ? badRequest('the client closed the connection before sending all of the request body') : undefined));
  });
}

/**
 * How deep a request body may nest. Everything after decoding (patches, defaulting, validation)
 * walks objects recursively; a body nested deeper would end in a stack overflow, a 500 for what is
 * the client's mistake. Upstream's decoder refuses JSON deeper than 10,000; objects never come near.
 */
export const MAX_BODY_NESTING = 1_000;

function nestingError(): StatusError {
  return badRequest(`the request body is nested more than ${MAX_BODY_NESTING} levels deep`);
}

/** Refuses JSON text nested too deep before it is parsed: a scan of its brackets outside strings. */
function checkJsonNesting(body: Buffer): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_BODY_NESTING) throw nestingError();
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
}

/** The same for a value already decoded (YAML). */
function checkValueNesting(value: unknown): void {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > MAX_BODY_NESTING) throw nestingError();
    for (const child of Object.values(v as object)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
}

/**
 * A body that is not an object at all, with the decoder's reason: a 400 as it stands, and what a
 * create or update reports as an unrecognized object (type-meta.ts's unrecognizedBody).
 */
export class UndecodableBody extends StatusError {
  constructor(override readonly cause: string) {
    super(400, 'BadRequest', cause);
  }
}

function parseJson(body: Buffer): unknown {
  checkJsonNesting(body);
  const text = body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UndecodableBody(`couldn't get version/kind; json parse error: ${goJsonSyntaxError(text, e)}`);
  }
}

// Where JSON.parse stopped, by its message, as the step of Go's encoding/json scanner that stops
// there. What V8 says is no guide to Go's words (it calls a missing `}` at the end "Expected ','
// or '}'"), but where it stopped is: Go's scanner stops at the same character.
const GO_JSON_STEPS: [RegExp, string][] = [
  [/^Expected ',' or '\}' after property value/, 'after object key:value pair'],
  [/^Expected ':' after property name/, 'after object key'],
  [/^Expected (property name or '\}'|double-quoted property name)/, 'looking for beginning of object key string'],
  [/^Expected ',' or '\]' after array element/, 'after array element'],
  [/^Unexpected non-whitespace character after JSON/, 'after top-level value'],
  [/^Bad control character in string literal/, 'in string literal'],
  [/^Bad escaped character/, 'in string escape code'],
];

/** Go's quoteChar: the character as a Go rune literal. */
function goQuoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return "'\"'";
  return `'${JSON.stringify(c).slice(1, -1)}'`;
}

/** Go's encoding/json message for a body JSON.parse refused. */
function goJsonSyntaxError(text: string, e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  const at = /at position (\d+)/.exec(message);
  const pos = at ? Number(at[1]) : undefined;
  if (/end of JSON input|^Unterminated/.test(message) || (pos !== undefined && text.slice(pos).trim() === '')) return 'unexpected end of JSON input';
  const step = GO_JSON_STEPS.find(([re]) => re.test(message));
  if (step && pos !== undefined) return `invalid character ${goQuoteChar(text[pos]!)} ${step[1]}`;
  // V8 names the token but not where it is: where a value was to begin, as in a body of plain text.
  const token = /^Unexpected token '(.)'/su.exec(message);
  if (token) return `invalid character ${goQuoteChar(token[1]!)} looking for beginning of value`;
  return `invalid character in JSON: ${message}`;
}

// What upstream's decoder says of JSON that is not an object: it looks for apiVersion and kind first.
const TYPE_META_STRUCT = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

function jsonTypeName(v: unknown): string {
  return Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v;
}

function parseYaml(body: Buffer): unknown {
  try {
    const docs = YAML.parseAllDocuments(body.toString('utf8'));
    if (docs.length !== 1) throw new Error(docs.length === 0 ? 'empty document' : 'multiple YAML documents in one request');
    const doc = docs[0]!;
    if (doc.errors.length > 0) throw doc.errors[0]!;
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value !== null && typeof value === 'object') checkValueNesting(value);
    return value;
  } catch (e) {
    if (e instanceof StatusError) throw e;
    throw new UndecodableBody(`error converting YAML to JSON: ${(e as Error).message}`);
  }
}

/** Decodes a POST/PUT body into an object; a missing Content-Type is JSON (kubectl scale sends none). */
export function decodeObjectBody(body: Buffer, contentType: string | undefined): KubeObject {
  const type = mediaType(contentType);
  let value: unknown;
  if (type === '' || type === 'application/json' || type === '*/*') value = parseJson(body);
  else if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') value = parseYaml(body);
  else if (type === 'application/vnd.kubernetes.protobuf') value = decodeProtobufObject(body);
  else throw unsupportedMediaType(contentType ?? '');
  if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
    throw new UndecodableBody(`couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonTypeName(value)} into Go value of type ${TYPE_META_STRUCT}`);
  }
  return asObject(value ?? {});
}

export function asObject(value: unknown): KubeObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('the request body must be a JSON object');
  }
  const obj = value as KubeObject;
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  if (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) throw badRequest('metadata must be an object');
  return obj;
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export function patchTypeOf(contentType: string | undefined): PatchType {
  switch (mediaType(contentType)) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+cbor':
      return 'apply';
    default:
      throw new StatusError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
      );
  }
}

export function decodePatchBody(body: Buffer, type: PatchType): unknown {
  return type === 'apply' ? parseYaml(body) : parseJson(body);
}

export interface ResponseOptions {
  warnings?: string[];
}

/** Warning headers as upstream writes them: code 299, no agent, the text quoted. */
export function warningHeader(warnings: readonly string[]): string[] {
  return warnings.map((w) => `299 - ${JSON.stringify(w)}`);
}

export function sendJson(res: ServerResponse, code: number, body: unknown, opts: ResponseOptions = {}): void {
  sendJsonText(res, code, body !== null && typeof body === 'object' ? objectJson(body as KubeObject) : JSON.stringify(body), opts);
}

/** Pieces of a streamed answer are gathered up to this size and written one batch at a time. */
const STREAM_BATCH_CHARS = 64 * 1024;

/**
 * A JSON answer sent as it is encoded, batch by batch, waiting whenever the client's connection
 * has enough in hand: a big list neither builds its whole text in memory nor holds the event loop
 * while megabytes are encoded and encrypted, so a node's heartbeat is answered between two of
 * its batches. A small answer goes out whole, with its Content-Length.
 */
export async function sendJsonStream(req: IncomingMessage, res: ServerResponse, code: number, parts: Iterable<string>): Promise<void> {
  if (res.headersSent) return void res.end();
  // A client that went while the list was read: nobody to write to, and no 'drain' or 'close' to come.
  if (clientGone(req, res)) return;
  const it = parts[Symbol.iterator]();
  let next = it.next();
  const batch = (): string => {
    let text = '';
    while (!next.done && text.length < STREAM_BATCH_CHARS) {
      text += next.value;
      next = it.next();
    }
    return text;
  };
  const first = batch();
  if (next.done) return sendJsonText(res, code, first);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  try {
    let text = first;
    for (;;) {
      // The last batch carries the newline Go's json.Encoder ends with.
      if (next.done) text += '\n';
      if (!res.write(text) && !(await drained(req, res))) return;
      if (next.done) break;
      text = batch();
    }
  } catch (e) {
    // Half a list must not pass for a whole one.
    abortResponse(req, res);
    throw e;
  }
  res.end();
}

/** True once the response can take more, false when the client went away (before or while waiting). */
function drained(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  // A write to a response whose client is gone returns false and no event follows.
  if (clientGone(req, res)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => (): void => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

/** A JSON answer already encoded (a list spliced from its items' stored text). */
export function sendJsonText(res: ServerResponse, code: number, json: string, opts: ResponseOptions = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  // A trailing newline, as Go's json.Encoder (and so kube-apiserver) writes: some clients read line by line.
  const text = `${json}\n`;
  const headers: Record<string, string | string[]> = {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': String(Buffer.byteLength(text)),
  };
  if (opts.warnings && opts.warnings.length > 0) headers.Warning = warningHeader(opts.warnings);
  res.writeHead(code, headers);
  res.end(text);
}

export function sendStatus(res: ServerResponse, status: Status): void {
  // As upstream: a Status that says when to come back says it in Retry-After too, which is what
  // clients read (client-go waits that long and sends the request again).
  const retryAfter = status.details?.retryAfterSeconds;
  if (retryAfter !== undefined && (status.code === 429 || status.code >= 500) && !res.headersSent) res.setHeader('Retry-After', String(retryAfter));
  sendJson(res, status.code, status);
}
