// A simulated node's view of the API: the fleet's one shared client, each request sent as that
// node (Impersonate-User system:node:<name>, Impersonate-Group system:nodes). The server then
// authenticates the fleet's credential once per connection and authorizes every write as the node
// it names — the node authorizer and NodeRestriction apply exactly as to a real agent — while
// thousands of nodes share a handful of connections instead of one TLS session each.
import type { AgentApi } from '../agent/api.js';
import { NODES_GROUP, nodeUserName } from '../auth/user.js';
import type { ApiClient, RequestOptions } from '../client/rest.js';
import { isStatusError } from '../api/errors.js';

export function actingAs(client: ApiClient, nodeName: string): AgentApi {
  const headers = { 'Impersonate-User': nodeUserName(nodeName), 'Impersonate-Group': NODES_GROUP };
  const as = (o: RequestOptions | undefined): RequestOptions => ({ ...o, headers: { ...o?.headers, ...headers } });
  return {
    get: (path, o) => client.get(path, as(o)),
    create: (path, body, o) => client.create(path, body, as(o)),
    replace: (path, body, o) => client.replace(path, body, as(o)),
    patch: (path, body, type, o) => client.patch(path, body, type, as(o)),
    delete: (path, body, o) => client.delete(path, body, as(o)),
  };
}

/**
 * Fails at once, in one line, when the fleet's credential may not act as its nodes: every request
 * the fleet makes would be refused, and a fleet that retried them would wait silently forever. One
 * read as the first node asks the server the question the fleet depends on. Other failures (an
 * API still starting, a network error) are left to the fleet's retries, as an agent leaves them.
 */
export async function assertMayActAsNodes(client: ApiClient, nodeName: string): Promise<void> {
  try {
    await actingAs(client, nodeName).get(`/api/v1/nodes/${encodeURIComponent(nodeName)}`);
  } catch (e) {
    if (isStatusError(e) && e.code === 404) return;
    if (isStatusError(e) && (e.code === 401 || e.code === 403)) {
      const why = e.code === 401 ? 'the API server does not accept the credential' : 'the credential may not impersonate nodes';
      throw new Error(
        `${why}, and every simulated node acts through it as system:node:<name> (${e.status.message}): use the cluster's admin kubeconfig (--kubeconfig DIR/kubeconfig) or the token of a user in system:masters`,
      );
    }
  }
}
