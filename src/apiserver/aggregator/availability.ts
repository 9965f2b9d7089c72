// The availability controller (upstream's remote AvailableConditionController): keeps each
// non-local APIService's Available condition true to whether its Service has a ready endpoint and
// the extension server there answers discovery for the group-version. It looks again shortly after
// any APIService, Service, Endpoints or EndpointSlice changes, and every 30 s (a server can die
// while its endpoints stay), and writes only a changed condition, so several members agree quietly.
import type { Clock, Timer } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { errorText } from '../../util/error-text.js';
import { rfc3339 } from '../../util/time.js';
import { AVAILABLE_CONDITION, availableCondition, caBundleOf, isLocal, type APIService, type APIServiceCondition } from '../../api/kinds/apiservice.js';
import { hostPort, resolveService, serviceServerName, type ServiceObjects } from '../service-resolver.js';
import { CONNECT_TIMEOUT_MS, caBundlePem, type ExtensionTransport } from './extension-transport.js';
import { AGGREGATOR_USER, identityHeaders } from './front-proxy.js';
import type { AggregatorMetrics } from './metrics.js';

export interface AvailabilityDeps {
  clock: Clock;
  log: Logger;
  objects: ServiceObjects;
  transport: ExtensionTransport;
  metrics: AggregatorMetrics;
  /** Every APIService, as the watch cache holds them. */
  apiServices(): APIService[];
  /** Writes the Available condition to the APIService's status. */
  writeCondition(name: string, condition: APIServiceCondition): Promise<void>;
  /** The body the extension server answered its discovery check with (undefined: none). */
  discovered(apiService: APIService, body: unknown): void;
  /** Upstream resyncs every 30 s. */
  resyncMs?: number;
}

/** The whole discovery check: upstream allows 5 s a request, 6 s in all. */
const CHECK_TIMEOUT_MS = 6_000;
/** How soon after a change the APIServices are looked at again (changes come in bursts). */
const SETTLE_MS = 50;

type Check = { condition: Omit<APIServiceCondition, 'type' | 'lastTransitionTime'>; body?: unknown };

export class AvailabilityController {
  private timer?: Timer;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private readonly resyncMs: number;

  constructor(private readonly deps: AvailabilityDeps) {
    this.resyncMs = deps.resyncMs ?? 30_000;
  }

  /** Looks at every APIService soon (a change happened, or a call to an extension server failed). */
  trigger(delayMs = SETTLE_MS): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.timer?.cancel();
    this.timer = this.deps.clock.setTimeout(() => this.run(), delayMs);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private run(): void {
    this.timer = undefined;
    this.running = this.syncAll()
      .catch((e: unknown) => this.deps.log.warn({ err: errorText(e) }, 'APIService availability check failed'))
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.trigger();
        } else this.trigger(this.resyncMs);
      });
  }

  private known = new Set<string>();

  private async syncAll(): Promise<void> {
    const all = this.deps.apiServices();
    const names = new Set(all.map((s) => s.metadata.name!));
    for (const gone of this.known) if (!names.has(gone)) this.deps.metrics.forget(gone);
    this.known = names;
    await Promise.all(all.map((s) => this.sync(s)));
  }

  private async sync(apiService: APIService): Promise<void> {
    const name = apiService.metadata.name!;
    const before = availableCondition(apiService);
    if (isLocal(apiService)) return this.deps.metrics.observe(name, before?.status === 'True');
    const check = await this.check(apiService);
    this.deps.discovered(apiService, check.body);
    const now = check.condition;
    const available = now.status === 'True';
    this.deps.metrics.observe(name, available, !available && before?.status === 'True' ? (now.reason ?? '') : undefined);
    if (before && before.status === now.status && before.reason === now.reason && before.message === now.message) return;
    if (before?.status !== now.status) this.deps.log.info({ apiService: name, from: before?.status ?? 'Unknown', to: now.status, reason: now.reason }, 'APIService availability changed');
    // The transition time moves only when the status does, as upstream's condition helper keeps it.
    const lastTransitionTime = before && before.status === now.status && before.lastTransitionTime ? before.lastTransitionTime : rfc3339(this.deps.clock.now());
    await this.deps.writeCondition(name, { type: AVAILABLE_CONDITION, ...now, lastTransitionTime });
  }

  /** Upstream's checks in its order: the Service, its endpoints, then a discovery request answered. */
  private async check(apiService: APIService): Promise<Check> {
    const spec = apiService.spec ?? {};
    const ref = spec.service ?? {};
    const resolved = resolveService(ref, this.deps.objects);
    if (!resolved.ok) return { condition: { status: 'False', reason: resolved.reason, message: resolved.message } };
    const path = apiService.metadata.name === 'v1.' ? `/api/${spec.version ?? 'v1'}` : `/apis/${spec.group ?? ''}/${spec.version ?? ''}`;
    // Every endpoint is asked at once; one good answer is enough, as upstream's parallel attempts.
    const attempts = resolved.endpoints.slice(0, 5).map((endpoint) => this.discover(apiService, endpoint, path));
    const results = await Promise.all(attempts);
    const good = results.find((r) => r.ok);
    if (good) return { condition: { status: 'True', reason: 'Passed', message: 'all checks passed' }, body: good.body };
    return { condition: { status: 'False', reason: 'FailedDiscoveryCheck', message: results[results.length - 1]!.error ?? 'no endpoint answered' } };
  }

  /**
   * One discovery request, as upstream makes it: identity system:kube-aggregator in system:masters,
   * the server's certificate not checked (a check that is lied to only marks a status wrong).
   */
  private discover(apiService: APIService, endpoint: { host: string; port: number }, path: string): Promise<{ ok: boolean; body?: unknown; error?: string }> {
    const url = `https://${hostPort(endpoint)}${path}`;
    const target = { endpoint, serverName: serviceServerName(apiService.spec?.service ?? {}), insecureSkipTLSVerify: true, caPem: caBundlePem(caBundleOf(apiService)) };
    return new Promise((resolve) => {
      let settled = false;
      const done = (r: { ok: boolean; body?: unknown; error?: string }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(r);
      };
      const req = this.deps.transport.request(target, { method: 'GET', path, headers: { accept: 'application/json', ...identityHeaders(AGGREGATOR_USER) }, responseTimeoutMs: CONNECT_TIMEOUT_MS }, (res) => {
        const code = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          // A discovery document is small; an endless answer is not one.
          if (size > 8 * 1024 * 1024) return res.destroy(new Error('discovery answer too large'));
          chunks.push(c);
        });
        res.once('error', (e) => done({ ok: false, error: `failing or missing response from ${url}: ${e.message}` }));
        res.once('end', () => {
          if (code < 200 || code >= 300) return done({ ok: false, error: `bad status from ${url}: ${code}` });
          let body: unknown;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            body = undefined;
          }
          done({ ok: true, body });
        });
      });
      const deadline = setTimeout(() => {
        req.destroy();
        done({ ok: false, error: `timed out waiting for ${url}` });
      }, CHECK_TIMEOUT_MS);
      req.once('error', (e) => done({ ok: false, error: `failing or missing response from ${url}: ${e.message}` }));
      req.end();
    });
  }
}
