/**
 * Test helper: a TCP load balancer in front of some backends (an L4 "internal CLB"). Each new
 * connection goes to the next backend in turn, or to the one it is pinned to; `dropAll()`
 * cuts the open connections so clients reconnect (and land where the balancer now sends them).
 */
import net from 'node:net';

export interface TcpBalancer {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** Every later connection goes to `backend` (`host:port`); null: round robin again. */
  pin(backend: string | null): void;
  /** Where each connection went so far, in order. */
  readonly connections: readonly string[];
  dropAll(): void;
  close(): Promise<void>;
}

export async function startTcpBalancer(backends: readonly string[]): Promise<TcpBalancer> {
  let next = 0;
  let pinned: string | null = null;
  const connections: string[] = [];
  const open = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };
  const server = net.createServer((client) => {
    const backend = pinned ?? backends[next++ % backends.length]!;
    connections.push(backend);
    const [host, port] = [backend.slice(0, backend.lastIndexOf(':')), backend.split(':').pop()];
    const upstream = net.connect({ host, port: Number(port) });
    track(client);
    track(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', cut);
    upstream.on('error', cut);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const dropAll = () => {
    for (const socket of open) socket.destroy();
  };
  return {
    address: `127.0.0.1:${port}`,
    pin: (backend) => {
      pinned = backend;
    },
    connections,
    dropAll,
    close: () =>
      new Promise<void>((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
