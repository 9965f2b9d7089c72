// Exit statuses that tell a supervisor (systemd, `skiff up`) what to do next.

/** A refusal a restart cannot cure (retired node, name taken, token refused): not restarted (RestartPreventExitStatus). */
export const EXIT_CONFIG = 78;
/** A restart in place (SIGUSR2, for an upgrade): pods and the Node kept; the supervisor starts the next version at once. */
export const EXIT_RESTART = 75;
