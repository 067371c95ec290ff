/**
 * The edges this server's rooms hold on other media servers of the cluster
 * (./remote-edge.ts): opening one on the least loaded other live server, finding the edge a
 * transport or consumer id belongs to (calls about it are forwarded there), and one link
 * per such server that follows its event stream (`GET /internal/v1/events`) for what happens
 * to the edges there, and asks it twice a second which of them it still holds: an edge it
 * no longer holds (it restarted, or a dropped stream missed its close) is lost at once; a
 * server that stays unreachable for `peerLostMs` loses them all. A lost edge's listeners are reported in `routers_lost` by
 * the registry, so the room's owner node resets them alone.
 */
import type { Logger } from 'pino';
import { MediaEventStream } from '../adapters/media/media-event-stream.js';
import type { MediaEvent } from './events.js';
import type { RouterEntry } from './media-entries.js';
import type { MediaServerOptions } from './options.js';
import { PeerClient, type PeerServer } from './peer-client.js';
import { RemoteEdge } from './remote-edge.js';
import { connectPipe, openPipeEnd, tupleOf, type PipeTuple } from './remote-edge-host.js';

export interface RemoteEdgesDeps {
  /** This server's id in the cluster's directory. */
  readonly serverId: string;
  readonly options: MediaServerOptions;
  /** The other live servers that take edges, least loaded first. */
  readonly peers: () => Promise<readonly PeerServer[]>;
  /** How long a call to another server may take. */
  readonly timeoutMs: number;
  readonly peerLostMs: number;
  readonly logger: Logger;
}

/** Called when an edge is gone (see RemoteEdgeDeps.gone). */
export type EdgeGone = (edge: RemoteEdge, lostPeers: string[] | null, error: string) => void;

/** How often a server holding edges is asked which it still holds. */
const PROBE_EVERY_MS = 500;

export class RemoteEdges {
  /** Transport and consumer ids of every remote edge. */
  readonly #index = new Map<string, RemoteEdge>();
  readonly #links = new Map<string, PeerLink>();

  constructor(private readonly deps: RemoteEdgesDeps) {}

  /** The remote edge holding the transport or consumer `id`, if any. */
  edgeOf(id: string): RemoteEdge | undefined {
    return this.#index.get(id);
  }

  /** Opens an edge of `origin`'s room on another server; null when none would take it. */
  async open(origin: RouterEntry, gone: EdgeGone): Promise<RemoteEdge | null> {
    const peers = await this.deps.peers().catch((err: unknown) => {
      this.deps.logger.warn({ err }, 'reading the other media servers failed');
      return [];
    });
    for (const server of peers) {
      try {
        return await this.#openOn(server, origin, gone);
      } catch (err) {
        this.deps.logger.warn({ err, server: server.id, room: origin.roomCode }, 'remote edge');
      }
    }
    return null;
  }

  /** Stops following the other servers (their edges close with the origin routers). */
  close(): void {
    for (const link of this.#links.values()) link.close(true);
    this.#links.clear();
  }

  async #openOn(server: PeerServer, origin: RouterEntry, gone: EdgeGone): Promise<RemoteEdge> {
    const link = this.#link(server);
    link.opening++;
    try {
      await link.ready();
      return await this.#openThrough(link, origin, gone);
    } finally {
      link.opening--;
      this.#closeIfUnused(link);
    }
  }

  async #openThrough(link: PeerLink, origin: RouterEntry, gone: EdgeGone): Promise<RemoteEdge> {
    const { server } = link.client;
    const pipeOut = await openPipeEnd(origin.router, this.deps.options);
    try {
      const made = await link.client.data<{ router_id: string; pipe: PipeTuple }>(
        'POST',
        '/internal/v1/edges',
        { room_code: origin.roomCode, origin_server: this.deps.serverId, pipe: tupleOf(pipeOut) },
      );
      await connectPipe(pipeOut, made.pipe);
      const edge = new RemoteEdge(origin.roomCode, made.router_id, pipeOut, {
        client: link.client,
        index: this.#index,
        logger: this.deps.logger,
        gone: (e, lostPeers, error) => {
          link.delete(e);
          this.#closeIfUnused(link);
          gone(e, lostPeers, error);
        },
      });
      link.add(edge);
      this.deps.logger.info(
        { room: origin.roomCode, server: server.id, router: edge.routerId },
        'remote edge router opened',
      );
      return edge;
    } catch (error) {
      pipeOut.close();
      throw error;
    }
  }

  /**
   * The link to `server` (its events are followed before an edge opens there, and for as
   * long as one is open: an unused link closes).
   */
  #link(server: PeerServer): PeerLink {
    let link = this.#links.get(server.id);
    if (link && link.client.server.url !== server.url) {
      link.lostAll(`media server ${server.id} moved to ${server.url}`);
      link.close();
      this.#links.delete(server.id);
      link = undefined;
    }
    if (!link) {
      const client = new PeerClient(server, this.deps.options.internalToken, this.deps.timeoutMs);
      link = new PeerLink(client, this.deps);
      this.#links.set(server.id, link);
    }
    return link;
  }

  #closeIfUnused(link: PeerLink): void {
    if (!link.unused || this.#links.get(link.client.server.id) !== link) return;
    link.close();
    this.#links.delete(link.client.server.id);
  }
}

/** One other server holding edges of this server's rooms: its events, its liveness. */
class PeerLink {
  readonly #edges = new Map<string, { edge: RemoteEdge; since: number }>();
  /** Edges being opened through it. */
  opening = 0;
  readonly #stream: MediaEventStream;
  #probe: NodeJS.Timeout | undefined;
  #probing = false;
  #unreachableSince: number | null = null;
  /** Counts edges added and probes sent, so a probe judges only edges older than itself. */
  #tick = 0;

  constructor(
    readonly client: PeerClient,
    private readonly deps: RemoteEdgesDeps,
  ) {
    this.#stream = new MediaEventStream(
      { baseUrl: client.server.url, internalToken: client.internalToken, logger: deps.logger },
      (event) => this.#onEvent(event),
    );
  }

  async ready(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('event stream not ready')), this.deps.peerLostMs);
    });
    try {
      await Promise.race([this.#stream.ready, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  get unused(): boolean {
    return this.opening === 0 && this.#edges.size === 0;
  }

  add(edge: RemoteEdge): void {
    this.#edges.set(edge.routerId, { edge, since: ++this.#tick });
    if (!this.#probe) {
      this.#probe = setInterval(() => void this.#probeOnce(), PROBE_EVERY_MS);
      this.#probe.unref();
    }
  }

  delete(edge: RemoteEdge): void {
    this.#edges.delete(edge.routerId);
    if (this.#edges.size > 0) return;
    clearInterval(this.#probe);
    this.#probe = undefined;
  }

  lostAll(error: string): void {
    for (const { edge } of [...this.#edges.values()]) edge.lost(error);
  }

  /**
   * Stops following the server. Its client's idle connections close on their own, so a call
   * still in flight (an edge's close) finishes; `drop` closes them at once (shutdown).
   */
  close(drop = false): void {
    clearInterval(this.#probe);
    this.#probe = undefined;
    this.#stream.close();
    if (drop) this.client.close();
  }

  #onEvent(event: MediaEvent): void {
    if (event.type === 'routers_lost') {
      for (const lost of event.routers) this.#edges.get(lost.router_id)?.edge.onEvent(event);
      return;
    }
    if ('router_id' in event) this.#edges.get(event.router_id)?.edge.onEvent(event);
  }

  /**
   * Asks the server which of this server's edges it holds: one it no longer holds (it
   * restarted, or missed events closed it) is lost; a server unreachable for `peerLostMs`
   * loses them all.
   */
  async #probeOnce(): Promise<void> {
    if (this.#probing) return;
    this.#probing = true;
    const sent = ++this.#tick;
    const server = this.client.server.id;
    try {
      const path = `/internal/v1/edges?origin_server=${encodeURIComponent(this.deps.serverId)}`;
      const answer = await this.client.call('GET', path).catch(() => null);
      const held =
        (answer?.status === 200 && (answer.body.data as { router_ids?: unknown })) || null;
      if (held && Array.isArray(held.router_ids)) {
        this.#unreachableSince = null;
        const ids = new Set(held.router_ids);
        for (const { edge, since } of [...this.#edges.values()]) {
          if (since < sent && !ids.has(edge.routerId)) {
            edge.lost(`media server ${server} no longer holds the edge`);
          }
        }
        return;
      }
      const now = Date.now();
      this.#unreachableSince ??= now;
      if (now - this.#unreachableSince >= this.deps.peerLostMs) {
        this.deps.logger.warn({ server, edges: this.#edges.size }, 'media server unreachable');
        this.#unreachableSince = null;
        this.lostAll(`media server ${server} unreachable`);
      }
    } finally {
      this.#probing = false;
    }
  }
}
