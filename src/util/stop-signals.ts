// What each signal asks of a skiff process (agent, server, simulated fleet). A node leaving and a
// machine switched off with the rest of its cluster look alike from inside one process; only the
// one that stops the whole cluster (`skiff up`, `skiff down`) knows which it is, and says so with
// the signal it sends.

/**
 * SIGTERM / SIGINT: this process alone stops. Its node leaves (N6): cordoned, pods stopped and
 * reported, Node and Lease removed.
 */
export const LEAVE_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** SIGUSR2: a restart in place (an upgrade): pods keep running, the Node stays, the next version adopts them. */
export const RESTART_IN_PLACE_SIGNAL = 'SIGUSR2';

/**
 * SIGPWR ("power failure"): the whole cluster is being stopped (N6a) — machines switched off
 * together. The node's containers stop, but nothing is reported: the Node, its Lease and its pods
 * stay as they are, and the next start resumes the same pods. Chosen over SIGUSR1, which Node.js
 * keeps for its inspector, and over SIGHUP, which a lost terminal sends to whatever runs in it.
 */
export const CLUSTER_STOP_SIGNAL = 'SIGPWR';
