// Reading a watch in a test: the events until a condition holds, within a bounded time.
import type { KubeObject, WatchEvent } from '../../src/api/types.js';
import type { ListWatchSource } from '../../src/client/informer.js';

/** Watches `path` until `until` holds or `timeoutMs` passes, returning what was seen. */
export async function collectEvents(
  source: Pick<ListWatchSource, 'watch'>,
  path: string,
  query: Record<string, string>,
  until: (evs: WatchEvent<KubeObject>[]) => boolean,
  timeoutMs = 5000,
): Promise<WatchEvent<KubeObject>[]> {
  const stop = new AbortController();
  const events: WatchEvent<KubeObject>[] = [];
  const timer = setTimeout(() => stop.abort(), timeoutMs);
  try {
    for await (const ev of source.watch<KubeObject>(path, query, stop.signal)) {
      events.push(ev);
      if (until(events)) break;
    }
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
  return events;
}
