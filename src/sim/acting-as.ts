// A simulated node's view of the API: the fleet's one shared client, each request sent as that
// node (Impersonate-User system:node:<name>, Impersonate-Group system:nodes). The server then
// authenticates the fleet's credential once per connection and authorizes every write as the node
// it names — the node authorizer and NodeRestriction apply exactly as to a real agent — while
// thousands of nodes share a handful of connections instead of one TLS session each.
import type { AgentApi } from '../agent/api.js';
import { NODES_GROUP, nodeUserName } from '../auth/user.js';
import type { ApiClient, RequestOptions } from '../client/rest.js';

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
