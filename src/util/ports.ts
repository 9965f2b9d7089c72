// TCP ports on this machine: finding free ones, and checking before a start that the ones a
// command is about to use are free (so it can name the flag that moves them).
import { createServer, type AddressInfo, type Server } from 'node:net';

function listen(port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, host, () => resolve(s));
  });
}

/** Ports nothing listens on right now (the usual small race with other processes remains). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: n }, () => listen(0, '127.0.0.1')));
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** The error listening on host:port gives (EADDRINUSE, EACCES, ...), or undefined when it is free. */
export async function listenError(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  try {
    const s = await listen(port, host);
    await new Promise((r) => s.close(r));
    return undefined;
  } catch (e) {
    return e as NodeJS.ErrnoException;
  }
}
