/**
 * Connections accepted on the root-only unix socket (DATA_DIR/outpost.sock): whoever can open it
 * is root or the agent's own user, so its callers are admins, as on kubeadm's admin.conf.
 */
export const localSockets = new WeakSet<object>();

/** Whether a request's socket came through the local unix socket. */
export const isLocalSocket = (socket: unknown): boolean =>
  typeof socket === 'object' && socket !== null && localSockets.has(socket);
