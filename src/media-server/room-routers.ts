/**
 * One room's routers on this media server: its origin, where every producer is made, and
 * the edge routers its audience spreads over once the origin is at its consumer budget
 * (./audience.ts). Every producer of the origin is piped to every edge (mediasoup's
 * `pipeToRouter`: a PipeTransport pair over loopback, whichever workers the two routers are
 * on), so a listener consumes the room's producers on whichever router it was placed;
 * closing or pausing a producer on the origin closes or pauses its pipes (mediasoup links
 * the pipe's consumer and producer), so the server still decides who is heard everywhere.
 * An edge that loses its last listener closes after a linger, unless one comes back.
 */
import type { types } from 'mediasoup';
import type { Logger } from 'pino';
import { isIdleEdge, placeListener } from './audience.js';
import type { RouterEntry } from './media-entries.js';
import { errors } from '../shared/error-codes.js';

export interface RoomRoutersDeps {
  /** Opens a new edge router for this room (on the least loaded worker). */
  readonly openEdge: () => Promise<RouterEntry>;
  /** A router's consumer budget. */
  readonly budget: number;
  readonly lingerMs: number;
  readonly logger: Logger;
}

export class RoomRouters {
  readonly #edges = new Set<RouterEntry>();
  /** The edge being opened, so that listeners arriving meanwhile share it. */
  #opening: Promise<RouterEntry> | null = null;
  readonly #lingers = new Map<RouterEntry, NodeJS.Timeout>();

  constructor(
    readonly origin: RouterEntry,
    private readonly deps: RoomRoutersDeps,
  ) {}

  /** The origin first, then the edges in the order they opened. */
  get all(): RouterEntry[] {
    return [this.origin, ...this.#edges];
  }

  /**
   * The router a new listener's receiving transport goes on, opening an edge if all are
   * full; its load counts the listener from here (placed in the same tick as counted, so
   * listeners placed together spread). The caller gives the count back with
   * {@link unreserve} once the transport exists (it then counts) or failed.
   */
  async routerForListener(): Promise<RouterEntry> {
    for (;;) {
      const placed = placeListener(this.all, this.deps.budget);
      if (placed) {
        this.#stopLinger(placed);
        placed.load += 1;
        return placed;
      }
      if (this.origin.closing) throw errors.ROOM_ROUTER_NOT_FOUND(this.origin.roomCode);
      this.#opening ??= this.#openEdge().finally(() => {
        this.#opening = null;
      });
      await this.#opening;
    }
  }

  /** Gives back a placement's count (see {@link routerForListener}). */
  unreserve(entry: RouterEntry): void {
    entry.load -= 1;
    this.transportLeft(entry);
  }

  /** Pipes a new producer of the origin to every edge (a failed pipe is made again on use). */
  pipeEverywhere(producer: types.Producer): void {
    for (const edge of this.#edges) void this.pipeOf(edge, producer.id).catch(() => undefined);
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
    if (!isIdleEdge(entry) || this.#lingers.has(entry)) return;
    const timer = setTimeout(() => {
      this.#lingers.delete(entry);
      if (!isIdleEdge(entry)) return;
      entry.closing = 'idle';
      entry.router.close();
    }, this.deps.lingerMs);
    timer.unref();
    this.#lingers.set(entry, timer);
  }

  /** `entry` closed: an edge leaves the room; the origin takes its edges with it. */
  routerClosed(entry: RouterEntry): void {
    this.#stopLinger(entry);
    if (entry.role === 'edge') {
      this.#edges.delete(entry);
      return;
    }
    for (const edge of [...this.#edges]) {
      edge.closing ??= 'router_closed';
      edge.router.close();
    }
  }

  async #openEdge(): Promise<RouterEntry> {
    const edge = await this.deps.openEdge();
    if (this.origin.closing || this.origin.router.closed) {
      edge.closing = 'router_closed';
      edge.router.close();
      throw errors.ROOM_ROUTER_NOT_FOUND(this.origin.roomCode);
    }
    this.#edges.add(edge);
    this.deps.logger.info(
      { room: edge.roomCode, router: edge.router.id, worker: edge.slot.index },
      'edge router opened',
    );
    return edge;
  }

  #stopLinger(entry: RouterEntry): void {
    const timer = this.#lingers.get(entry);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#lingers.delete(entry);
  }
}
