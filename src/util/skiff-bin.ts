// How skiff starts skiff: the command its processes run (`skiff up`'s members and fleet, the
// scenarios' clusters, the local cloud's machines, a systemd unit) and the Node.js flags of a
// server.
import { fileURLToPath } from 'node:url';

/** bin/skiff.js of this installation. */
export const SKIFF_BIN = fileURLToPath(new URL('../../../bin/skiff.js', import.meta.url));

/**
 * Node.js flags for a server. A write leaves most of its garbage young: with V8's default 16 MiB
 * semi-spaces much of it lived through two scavenges and was copied into the old generation, to
 * be marked and compacted later; 64 MiB lets it die young. Measured on pod starts (300 simulated
 * nodes, 3,000 pods): about 15 % less server CPU a pod, for at most 96 MiB more young generation.
 * A fleet (`skiff sim`) showed no difference (1.8–2.1 ms a pod either way), so it is not given
 * them. bin/skiff.js's first line passes the same flag, for a skiff started from a shell.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
