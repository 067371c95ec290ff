/**
 * One room's routers on this media server: its origin, where every producer is made, and
 * the edge routers its audience spreads over once the origin is at its consumer budget
 * (./audience.ts). Every producer of the origin is piped to every edge (mediasoup's
 * `pipeToRouter`: a PipeTransport pair over loopback, whichever workers the two routers are
 * on), so a listener consumes the room's producers on whichever router it was placed;
 * closing or pausing a producer on the origin closes or pauses its pipes (mediasoup links
 * the pipe's consumer and producer), so the server still decides who is heard everywhere.
 * An edge that loses its last listener closes after a linger, unless one comes back.
 *
 * In a cluster, once every worker of this server holds one of the room's routers, the next
 * edge opens on another media server (./remote-edge.ts): the producers are piped there over
 * the network, and that server closes the edge when idle.
 */
import type { types } from 'mediasoup';
import type { Logger } from 'pino';
import { placeListener } from './audience.js';
import { EdgeLinger } from './edge-linger.js';
import type { RouterEntry } from './media-entries.js';
import { RemoteEdge } from './remote-edge.js';
import { errors } from '../shared/error-codes.js';

/** One of a room's routers: on this server, or an edge on another one. */
export type RoomRouter = RouterEntry | RemoteEdge;

export interface RoomRoutersDeps {
  /**
   * Opens a new edge router for this room: on the least loaded worker, or, when `remote`
   * is allowed and every worker holds one of the room's routers, on another server.
   */
  readonly openEdge: (remote: boolean) => Promise<RoomRouter>;
  /** A router's consumer budget. */
  readonly budget: number;
  readonly lingerMs: number;
  readonly logger: Logger;
}

export class RoomRouters {
  readonly #edges = new Set<RoomRouter>();
  /** The edge being opened, so that listeners arriving meanwhile share it. */
  #opening: Promise<RoomRouter> | null = null;
  readonly #linger: EdgeLinger;

  constructor(
    readonly origin: RouterEntry,
    private readonly deps: RoomRoutersDeps,
  ) {
    this.#linger = new EdgeLinger(deps.lingerMs);
  }

  /** The origin first, then the edges in the order they opened. */
  get all(): RoomRouter[] {
    return [this.origin, ...this.#edges];
  }

  /** The routers on this server: the origin first, then its local edges. */
  get local(): RouterEntry[] {
    return this.all.filter((r): r is RouterEntry => !(r instanceof RemoteEdge));
  }

  /**
   * The router a new listener's receiving transport goes on, opening an edge if all are
   * full; its load counts the listener from here (placed in the same tick as counted, so
   * listeners placed together spread). The caller gives the count back with
   * {@link unreserve} once the transport exists (it then counts) or failed. `remote`: the
   * caller can use an edge on another server.
   */
  async routerForListener(remote: boolean): Promise<RoomRouter> {
    for (;;) {
      const candidates = remote ? this.all : this.local;
      const placed = placeListener(candidates, this.deps.budget);
      if (placed) {
        if (!(placed instanceof RemoteEdge)) this.#linger.stop(placed);
        placed.load += 1;
        return placed;
      }
      if (this.origin.closing) throw errors.ROOM_ROUTER_NOT_FOUND(this.origin.roomCode);
      this.#opening ??= this.#openEdge(remote).finally(() => {
        this.#opening = null;
      });
      await this.#opening;
    }
  }

  /** Gives back a placement's count (see {@link routerForListener}). */
  unreserve(entry: RoomRouter): void {
    entry.load -= 1;
    if (!(entry instanceof RemoteEdge)) this.transportLeft(entry);
  }

  /** Pipes a new producer of the origin to every edge (a failed pipe is made again on use). */
  pipeEverywhere(producer: types.Producer): void {
    for (const edge of this.#edges) {
      const piping =
        edge instanceof RemoteEdge ? edge.pipe(producer) : this.pipeOf(edge, producer.id);
      void piping.catch(() => undefined);
    }
  }

  /**
   * The pipe producer carrying the origin's producer `producerId` on `edge`, made on first
   * use; a pipe that failed or closed is made again.
   */
  pipeOf(edge: RouterEntry, producerId: string): Promise<types.Producer> {
    const existing = edge.pipes.get(producerId);
    if (existing) return existing;
    const piping = this.origin.router
      // A new id for the pipe: two routers of one worker cannot hold the same producer id.
      .pipeToRouter({ producerId, router: edge.router, keepId: false })
      .then(({ pipeProducer }) => {
        if (!pipeProducer) throw errors.PRODUCER_NOT_FOUND(producerId);
        pipeProducer.observer.once('close', () => {
          if (edge.pipes.get(producerId) === piping) edge.pipes.delete(producerId);
        });
        return pipeProducer;
      });
    edge.pipes.set(producerId, piping);
    piping.catch((err: unknown) => {
      if (edge.pipes.get(producerId) === piping) edge.pipes.delete(producerId);
      if (!edge.router.closed && !this.origin.router.closed) {
        this.deps.logger.warn({ err, producer: producerId, edge: edge.router.id }, 'pipe failed');
      }
    });
    return piping;
  }

  /** A transport of `entry` closed: an edge with no one left closes after the linger. */
  transportLeft(entry: RouterEntry): void {
    this.#linger.transportLeft(entry);
  }

  /** `entry` closed: an edge leaves the room; the origin takes its edges with it. */
  routerClosed(entry: RoomRouter): void {
    if (!(entry instanceof RemoteEdge)) this.#linger.stop(entry);
    if (entry.role === 'edge') {
      this.#edges.delete(entry);
      return;
    }
    for (const edge of [...this.#edges]) closeEdge(edge, 'router_closed');
  }

  async #openEdge(remote: boolean): Promise<RoomRouter> {
    const edge = await this.deps.openEdge(remote);
    if (this.origin.closing || this.origin.router.closed) {
      closeEdge(edge, 'router_closed');
      throw errors.ROOM_ROUTER_NOT_FOUND(this.origin.roomCode);
    }
    this.#edges.add(edge);
    if (!(edge instanceof RemoteEdge)) {
      this.deps.logger.info(
        { room: edge.roomCode, router: edge.router.id, worker: edge.slot.index },
        'edge router opened',
      );
    }
    return edge;
  }
}

function closeEdge(edge: RoomRouter, reason: 'router_closed'): void {
  if (edge instanceof RemoteEdge) {
    edge.close(reason);
    return;
  }
  edge.closing ??= reason;
  edge.router.close();
}
