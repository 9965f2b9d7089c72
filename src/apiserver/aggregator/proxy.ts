// Passes one request on to an extension API server, as kube-aggregator's proxy handler does: the
// same method, path, query and body; the caller's credentials replaced by the front-proxy identity
// headers; the answer (status, headers, body) passed back as it comes, so a watch streams. The
// request is over for the server's bookkeeping once the answer's head is passed on: a watch then
// holds no seat of flow control while it streams.
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { StatusError } from '../../api/errors.js';
import type { UserInfo } from '../request-context.js';
import { abortResponse, clientGone } from '../http/listener.js';
import { identityHeaders, isIdentityHeader } from './front-proxy.js';
import type { ExtensionTarget, ExtensionTransport } from './extension-transport.js';

/** Headers of one connection, not of the request (RFC 9110 §7.6.1), and HTTP/2's pseudo-headers. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'http2-settings']);

/** Upstream's default request timeout (--request-timeout): how long a non-watch call may take to answer. */
const RESPONSE_TIMEOUT_MS = 60_000;

/** The request headers passed on: not the caller's credentials, and never identity headers it made up. */
function forwardedHeaders(req: IncomingMessage, user: UserInfo): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':') || HOP_BY_HOP.has(name)) continue;
    if (name === 'authorization' || name.startsWith('impersonate-') || isIdentityHeader(name)) continue;
    out[name] = value;
  }
  const from = req.socket?.remoteAddress;
  if (from) out['x-forwarded-for'] = req.headers['x-forwarded-for'] ? `${String(req.headers['x-forwarded-for'])}, ${from}` : from;
  return { ...out, ...identityHeaders(user) };
}

/** The response headers passed back: none that only described the extension server's connection. */
function returnedHeaders(res: IncomingMessage): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(res.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

export interface ProxyCall {
  target: ExtensionTarget;
  transport: ExtensionTransport;
  user: UserInfo;
  /** Watches and other streams: no time limit once the server has answered. */
  longRunning: boolean;
  /** Called when the extension server could not be reached (the availability check should look again). */
  unreachable?: () => void;
}

/**
 * Proxies `req` and resolves once the answer's head is passed on (the body keeps flowing); rejects
 * with a 503 Status when the extension server cannot be reached or does not answer in time.
 */
export function proxyRequest(req: IncomingMessage, res: ServerResponse, call: ProxyCall): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let answered = false;
    const upstream = call.transport.request(
      call.target,
      {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: forwardedHeaders(req, call.user),
        ...(call.longRunning ? {} : { responseTimeoutMs: RESPONSE_TIMEOUT_MS }),
      },
      (answer) => {
        answered = true;
        if (clientGone(req, res)) {
          answer.destroy();
          return resolve();
        }
        res.writeHead(answer.statusCode ?? 502, returnedHeaders(answer));
        // A watch's events must reach the client as they come, not when a buffer fills.
        res.flushHeaders();
        answer.pipe(res);
        // The extension server broke off mid-answer: the client must see a broken response, not a short one.
        answer.once('error', () => abortResponse(req, res));
        answer.once('aborted', () => abortResponse(req, res));
        resolve();
      },
    );
    upstream.once('error', (e) => {
      if (answered) return abortResponse(req, res);
      call.unreachable?.();
      reject(unavailable(`error trying to reach service: ${e.message}`));
    });
    const stop = (): void => void upstream.destroy();
    res.once('close', stop);
    req.once('aborted', stop);
    if (clientGone(req, res)) return stop();
    // Bodies (creates, patches) stream through; GETs end at once.
    if (req.method === 'GET' || req.method === 'HEAD') upstream.end();
    else req.pipe(upstream);
  });
}

/**
 * A 503 without Retry-After, as the aggregator answers: clients (client-go) would otherwise retry
 * it ten times before telling their user the API is down.
 */
export function unavailable(message: string): StatusError {
  return new StatusError(503, 'ServiceUnavailable', message);
}
