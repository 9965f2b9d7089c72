// Which API server a client prefers, when it knows several: every agent preferring the first
// member (the one it was joined through) would put the whole fleet's watches and heartbeats on
// one server, and move them all at once when it fails. k3s shuffles its agents' server lists;
// skiff orders each agent's list by rendezvous hashing on its node name: the preferences spread
// evenly over the members, each agent's stays the same across restarts, and a member joining or
// leaving moves only the agents that prefer (or will prefer) it.
import { createHash } from 'node:crypto';

function weight(identity: string, server: string): string {
  return createHash('sha256').update(identity).update('\0').update(server).digest('hex');
}

/** `servers` ordered by preference for `identity` (highest rendezvous weight first). */
export function preferenceOrder(servers: readonly string[], identity: string): string[] {
  return [...new Set(servers)]
    .map((s) => ({ s, w: weight(identity, s) }))
    .sort((a, b) => (a.w < b.w ? 1 : a.w > b.w ? -1 : 0))
    .map((x) => x.s);
}
