// A node's only way to the API servers in a scenario that partitions it: a TCP proxy (TLS passes
// through untouched) that can be cut, as a network is. Cut, it stops moving bytes on every
// connection it carries and holds new ones open without forwarding any, so the agent sees what a
// blackholed network gives — requests and watches that hang until its own timeouts, not refusals.
import { createServer, connect, type Server, type Socket } from 'node:net';

export class FaultProxy {
  private readonly server: Server;
  private readonly open = new Set<Socket>();
  private readonly pairs = new Set<[Socket, Socket]>();
  private cut = false;
  private next = 0;
  port = 0;

  /** `upstreams`: host:port of each API server, tried in turn per connection. */
  constructor(private readonly upstreams: { host: string; port: number }[]) {
    this.server = createServer((client) => this.accept(client));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as { port: number }).port;
    return `https://127.0.0.1:${this.port}`;
  }

  private accept(client: Socket): void {
    this.open.add(client);
    client.once('close', () => this.open.delete(client));
    client.on('error', () => client.destroy());
    if (this.cut) return; // held: bytes in, nothing out
    const to = this.upstreams[this.next++ % this.upstreams.length]!;
    const upstream = connect(to.port, to.host);
    this.open.add(upstream);
    upstream.once('close', () => {
      this.open.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.once('close', () => upstream.destroy());
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    client.once('close', () => this.pairs.delete(pair));
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** The network goes: what was flowing stops, and nothing new gets through. */
  partition(): void {
    this.cut = true;
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  heal(): void {
    this.cut = false;
    // Connections held or stalled while cut are past saving (TLS records were lost midway); their
    // clients retry on fresh ones, as after a real partition their TCP sessions would time out.
    for (const s of this.open) s.destroy();
    this.pairs.clear();
  }

  async close(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
