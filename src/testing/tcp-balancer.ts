/**
 * Test-only: a TCP load balancer (an L4 "internal CLB") in front of node processes. It pipes
 * bytes both ways; when either side closes, so does the other (a node killed with SIGKILL
 * drops its clients' sockets, as behind a real balancer). Each front address picks a backend
 * per new connection: the first of its own order that is not marked down, or, without an
 * order, the next one in turn (or the one it is pinned to). A dead backend is used until the
 * test marks it down, as a balancer's health check notices a node only after a while:
 * meanwhile its new connections fail. With `redispatch`, a connection the backend refuses
 * marks it down and goes to the next one at once, as nginx's `proxy_next_upstream error` or
 * HAProxy's `option redispatch` do.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface Backend {
  readonly host: string;
  readonly port: number;
}

/** `host:port` of a backend, as the balancer logs its connections. */
const addressOf = (b: Backend) => `${b.host}:${b.port}`;

export class TcpBalancer {
  private readonly down = new Set<number>();
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private next = 0;
  private pinned: number | null = null;
  /** Where each connection went so far (`host:port`), in order. */
  readonly connections: string[] = [];

  constructor(
    private readonly backends: readonly Backend[],
    private readonly options: { redispatch?: boolean } = {},
  ) {}

  /** A balancer in front of `host:port` backends, with one round-robin front: its address. */
  static async roundRobin(
    backends: readonly string[],
  ): Promise<{ balancer: TcpBalancer; address: string }> {
    const balancer = new TcpBalancer(
      backends.map((b) => ({
        host: b.slice(0, b.lastIndexOf(':')),
        port: Number(b.slice(b.lastIndexOf(':') + 1)),
      })),
    );
    const url = await balancer.front();
    return { balancer, address: url.replace(/^http:\/\//, '') };
  }

  /**
   * A new front on a free port of 127.0.0.1; its base URL. With `order`, it tries the
   * backends in that order; without, it takes them in turn.
   */
  async front(order?: readonly number[]): Promise<string> {
    const server = createServer((client) => this.forward(client, order));
    this.servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  }

  /** Every later round-robin connection goes to the backend at `address`; null: in turn. */
  pin(address: string | null): void {
    const index = this.backends.findIndex((b) => addressOf(b) === address);
    this.pinned = address === null || index < 0 ? null : index;
  }

  /** The health check noticed: no new connection goes to backend `index` any more. */
  markDown(index: number): void {
    this.down.add(index);
  }

  /** Back in service (a node restarted): new connections may go to it again. */
  markUp(index: number): void {
    this.down.delete(index);
  }

  /** Cuts every open connection, so clients reconnect where the balancer now sends them. */
  dropAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.dropAll();
    await Promise.all(
      this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
    );
  }

  private pick(order: readonly number[] | undefined): number | undefined {
    if (order) return order.find((i) => !this.down.has(i));
    if (this.pinned !== null) return this.pinned;
    for (let tries = 0; tries < this.backends.length; tries++) {
      const index = this.next++ % this.backends.length;
      if (!this.down.has(index)) return index;
    }
    return undefined;
  }

  private forward(client: Socket, order: readonly number[] | undefined): void {
    this.track(client);
    this.connect(client, order);
  }

  /** Pipes `client` to the backend picked, once connected (nothing it sent is lost before). */
  private connect(client: Socket, order: readonly number[] | undefined): void {
    const index = this.pick(order);
    if (index === undefined) {
      client.destroy();
      return;
    }
    this.connections.push(addressOf(this.backends[index]!));
    const upstream = createConnection(this.backends[index]!);
    this.track(upstream);
    let connected = false;
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    const onClientGone = () => upstream.destroy();
    client.on('error', onClientGone).on('close', onClientGone);
    upstream.once('connect', () => {
      connected = true;
      client.off('error', onClientGone).off('close', onClientGone);
      client.on('error', end).on('close', end);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.on('error', () => {
      if (connected || !this.options.redispatch || client.destroyed) return end();
      client.off('error', onClientGone).off('close', onClientGone);
      this.markDown(index);
      this.connect(client, order);
    });
    upstream.on('close', () => {
      if (connected) end();
    });
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }
}
