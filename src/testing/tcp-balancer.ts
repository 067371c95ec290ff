/**
 * Test-only: a TCP load balancer in front of node processes. Each front address sends every
 * new connection to the first backend of its own order that the balancer holds up, and
 * pipes bytes both ways; when either side closes, so does the other (a node killed with
 * SIGKILL drops its clients' sockets, as behind a real balancer). A dead backend is used
 * until the test marks it down, as a balancer's health check notices a node only after a
 * while: meanwhile its new connections fail.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface Backend {
  readonly host: string;
  readonly port: number;
}

export class TcpBalancer {
  private readonly down = new Set<number>();
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();

  constructor(private readonly backends: readonly Backend[]) {}

  /** A new front on a free port of 127.0.0.1, trying the backends in `order`; its base URL. */
  async front(order: readonly number[]): Promise<string> {
    const server = createServer((client) => this.forward(client, order));
    this.servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  }

  /** The health check noticed: no new connection goes to backend `index` any more. */
  markDown(index: number): void {
    this.down.add(index);
  }

  /** Back in service (a node restarted): new connections may go to it again. */
  markUp(index: number): void {
    this.down.delete(index);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(
      this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
    );
  }

  private forward(client: Socket, order: readonly number[]): void {
    this.track(client);
    const index = order.find((i) => !this.down.has(i));
    if (index === undefined) {
      client.destroy();
      return;
    }
    const upstream = createConnection(this.backends[index]!);
    this.track(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }
}
