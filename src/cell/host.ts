/**
 * The cell host of one node: activates cells it can own, routes the rest to their owner,
 * and drains cleanly. Domain-agnostic: room kinds register a {@link CellDomain}.
 */
import type { Logger } from 'pino';
import { RouteCache } from './route-cache.js';
import { errors } from '../shared/error-codes.js';
import type { Cell, CommandResult } from './cell.js';
import type { StoreTypes } from './cell-store.js';
import type { CellDomain, Command, DomainEvent } from './domain.js';
import { routeKey, type CellKey } from './lease.js';
import { createCellMetrics, type CellMetrics } from './metrics.js';
import { startBackgroundWork, type BackgroundWork } from './background.js';
import { LeaseRenewals } from './lease-renewal.js';
import {
  loadCell,
  MissingCell,
  registeredForForwarding,
  type ActivationHooks,
} from './activation.js';
import type {
  AnyCell,
  AnyDomain,
  CellHostConfig,
  CellHostDeps,
  ExecuteOptions,
  HandOverReport,
  Routed,
  ServiceState,
} from './host-types.js';

export type {
  CellHostConfig,
  CellHostDeps,
  ExecuteOptions,
  Routed,
  HandOverReport,
  ServiceState,
} from './host-types.js';

type Phase = 'new' | 'running' | 'draining' | 'drained' | 'stopping' | 'stopped';

/** Generic over the store's types: room kinds' SQL hooks are typed by the store they use. */
export class CellHost<T extends StoreTypes = StoreTypes> {
  readonly metrics: CellMetrics;
  readonly logger: Logger;
  /** Until when each loaded cell may answer from memory, and its lease renewals. */
  readonly leases: LeaseRenewals;
  private readonly domains = new Map<string, AnyDomain<T>>();
  private readonly cells = new Map<string, AnyCell<T>>();
  private readonly activating = new Map<string, Promise<AnyCell<T> | { ownerNodeId: string }>>();
  /**
   * Rooms owned elsewhere, remembered at most an eighth of a lease TTL (and 1 s): a route
   * to an owner that paused is used no longer than that after its lease ran out (a dead
   * one's is forgotten at the first refused connection, ../edge/owner-forward.ts).
   */
  private readonly routes: RouteCache;
  private background: BackgroundWork | null = null;
  private state: Phase = 'new';
  private drained: Promise<void> | null = null;
  private handingOver: Promise<HandOverReport> | null = null;
  /** What activation (./activation.ts) changes of this host's state. */
  private readonly hooks: ActivationHooks<T> = {
    reclaimLease: (route) => this.reclaimLease(route),
    adopt: (route, cell) => {
      this.cells.set(route, cell);
    },
    forget: (route, cell) => this.forget(route, cell),
  };

  constructor(
    readonly config: CellHostConfig,
    readonly deps: CellHostDeps<T>,
  ) {
    this.metrics = deps.metrics ?? createCellMetrics();
    this.logger = deps.logger.child({ module: 'cell-host' });
    this.routes = new RouteCache(Math.min(1_000, Math.floor(config.leaseTtlMs / 8)));
    this.leases = new LeaseRenewals({
      lease: deps.lease,
      metrics: this.metrics,
      leaseTtlMs: config.leaseTtlMs,
    });
  }

  /**
   * Drops what this node remembers of where a room lives (a forward to it failed: the owner
   * moved or died); the next call asks Redis again.
   */
  forgetRoute(key: CellKey): void {
    this.routes.forget(routeKey(key));
  }

  register<S, C extends Command, E extends DomainEvent>(domain: CellDomain<S, C, E, T>): void {
    if (this.domains.has(domain.kind)) throw new Error(`domain ${domain.kind} registered twice`);
    this.domains.set(domain.kind, domain);
    // So that a kind with no cell loaded shows 0 rather than no series at all.
    this.metrics.cellsLoaded.set({ kind: domain.kind }, 0);
  }

  get nodeId(): string {
    return this.config.nodeId;
  }
  /**
   * True only while the host takes cells and commands (started, not draining, not stopped):
   * what health checks and the sweeper ask. {@link CellHost.serviceState} says why not.
   */
  get isServing(): boolean {
    return this.state === 'running';
  }
  get serviceState(): ServiceState {
    return this.state === 'new' ? 'starting' : this.state === 'running' ? 'serving' : this.state;
  }
  get loadedCells(): readonly AnyCell<T>[] {
    return [...this.cells.values()];
  }

  /** Whether this node owns cells (the cells role); see {@link CellHostConfig.ownsCells}. */
  get ownsCells(): boolean {
    return this.config.ownsCells ?? true;
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('cell host already started');
    if (!this.ownsCells) {
      this.state = 'running';
      this.logger.info('cell host started without cells (an edge of the cells tier)');
      return;
    }
    await this.registerSelf();
    this.state = 'running';
    this.background = startBackgroundWork(this);
    this.logger.info({ advertiseAddr: this.config.advertiseAddr }, 'cell host started');
  }

  /** Runs a command on the room's owner: here, or tells the edge where to forward. */
  async execute<S, C extends Command, E extends DomainEvent>(
    domain: CellDomain<S, C, E, T>,
    key: CellKey,
    command: C,
    options: ExecuteOptions = {},
  ): Promise<Routed<CommandResult>> {
    const create = domain.creates?.(command) ?? true;
    const owner = await this.acquire(domain.kind, key, options, create);
    if ('addr' in owner) return owner;
    try {
      return {
        kind: 'local',
        value: await owner.submit(
          command,
          options.requestId,
          options.deadlineMs,
          options.fingerprint,
        ),
      };
    } finally {
      if (!owner.isPersisted) this.dropUnpersisted(owner);
    }
  }

  /**
   * A refused creation leaves the room without a row: unload it and give its lease back,
   * unless more commands for it are already queued.
   */
  private dropUnpersisted(cell: AnyCell<T>): void {
    const route = routeKey(cell.key);
    void cell.onLane(async () => {
      if (cell.isPersisted || cell.busy || cell.closed) return;
      const token = cell.leaseToken;
      cell.close('not_created');
      await this.deps.lease.release(route, token).catch(() => false);
    });
  }

  /**
   * Reads the owner's in-memory state. Not free of writes: a room not loaded anywhere is
   * activated here (EnsureOwner, then a `lease_epoch` bump in SQL that fences every earlier
   * owner), and a loaded cell whose lease may have run out renews it first (lost: the cell
   * closes and the room is loaded again), so a read never answers from a stale owner.
   */
  async query<S, R>(
    domain: CellDomain<S, Command, DomainEvent, T>,
    key: CellKey,
    read: (state: S, version: number) => R,
    options: ExecuteOptions = {},
  ): Promise<Routed<R>> {
    const owner = await this.acquire(domain.kind, key, options, domain.creates === undefined);
    if ('addr' in owner) return owner;
    const cell = owner as unknown as Cell<S, Command, DomainEvent, T>;
    return { kind: 'local', value: read(cell.currentState, cell.currentVersion) };
  }

  /** The loaded cell for a key, if any (no activation). */
  loaded(key: CellKey): AnyCell<T> | undefined {
    return this.cells.get(routeKey(key));
  }

  /**
   * Whether this node owns the room now: loaded here, and its lease surely still its own
   * (a node woken from a pause past its lease does not, until a renewal says so).
   */
  ownsNow(key: CellKey): boolean {
    const cell = this.loaded(key);
    return cell !== undefined && !cell.closed && this.leases.fresh(cell);
  }

  private async acquire(
    kind: string,
    key: CellKey,
    options: ExecuteOptions,
    create: boolean,
  ): Promise<AnyCell<T> | { kind: 'remote'; nodeId: string; addr: string; cached?: true }> {
    const route = routeKey(key);
    const live = this.cells.get(route);
    if (live && live.domain.kind !== kind) {
      throw errors.ROOM_KIND_MISMATCH(live.domain.kind, kind);
    }
    if (live && !live.closed && this.state === 'running') {
      if (this.leases.fresh(live)) return live;
      // Paused or starved past its lease: another node may have served the room meanwhile.
      await this.leases.renew(live);
      if (!live.closed) return live;
    }
    // A forwarded call is decided here by the lease itself, never by a remembered route.
    const cached = options.forwarded ? null : this.routes.get(route);
    if (cached && this.state === 'running') return { kind: 'remote', ...cached, cached: true };
    if (this.state !== 'running' && !options.forwarded) {
      // Taking no cells, this node still forwards to a room that lives elsewhere.
      const ownerNodeId = await this.deps.lease.ownerOf(route).catch(() => null);
      if (ownerNodeId && ownerNodeId !== this.nodeId) {
        const addr = await this.deps.registry.lookup(ownerNodeId).catch(() => null);
        if (addr) return { kind: 'remote', nodeId: ownerNodeId, addr };
      }
      throw errors.NODE_DRAINING(this.nodeId);
    }
    // A creating command that joined a non-creating activation of the same room retries.
    const owner = await this.activate(kind, key, create).catch((error: unknown) => {
      if (create && error instanceof MissingCell) return this.activate(kind, key, true);
      throw error;
    });
    if (!('ownerNodeId' in owner)) return owner;
    if (options.forwarded) {
      throw errors.NOT_OWNER_NODE(`node ${this.nodeId}`);
    }
    // The owner is the lease's, just read; its address may be remembered from another room.
    const known = this.routes.addrOf(owner.ownerNodeId);
    const addr = known ?? (await this.deps.registry.lookup(owner.ownerNodeId));
    if (!addr) {
      throw errors.OWNER_UNREACHABLE(`node ${owner.ownerNodeId} is not registered`);
    }
    this.routes.set(route, { nodeId: owner.ownerNodeId, addr });
    // A remembered address is a remembered route: refused or unreachable, the call runs again.
    return { kind: 'remote', nodeId: owner.ownerNodeId, addr, ...(known ? { cached: true } : {}) };
  }

  /** EnsureOwner, then the SQL epoch bump, then snapshot + replay. Shared by concurrent callers. */
  activate(
    kind: string,
    key: CellKey,
    create = false,
  ): Promise<AnyCell<T> | { ownerNodeId: string }> {
    if (this.state !== 'running') {
      return Promise.reject(errors.NODE_DRAINING(this.nodeId));
    }
    if (!this.ownsCells) return Promise.reject(errors.NOT_OWNER_NODE(`node ${this.nodeId}`));
    const domain = this.domains.get(kind);
    if (!domain) return Promise.reject(errors.UNKNOWN_KIND(kind));
    const route = routeKey(key);
    const pending = this.activating.get(route);
    if (pending) return pending;
    const started = loadCell(this, this.hooks, domain, key, route, create).finally(() =>
      this.activating.delete(route),
    );
    this.activating.set(route, started);
    return started;
  }

  /** Writes `room:node:{node_id}` (start, heartbeat, and whenever this node takes a lease). */
  registerSelf(): Promise<void> {
    const { nodeId, advertiseAddr, leaseTtlMs } = this.config;
    return this.deps.registry.register(nodeId, advertiseAddr, leaseTtlMs);
  }

  /** A loaded cell's lease was gone at its commit: see {@link LeaseRenewals.reclaim}. */
  private async reclaimLease(route: string): Promise<string | null> {
    const cell = this.cells.get(route);
    if (this.state !== 'running' || !cell) return null;
    const token = await this.leases.reclaim(cell, this.nodeId, (key) =>
      this.deps.store.leaseEpochOf(key),
    );
    if (token) await registeredForForwarding(this);
    return token;
  }

  /** Drops a cell from memory (after fencing or deactivation). */
  private forget(route: string, cell: AnyCell<T>): void {
    if (this.cells.get(route) !== cell) return;
    this.cells.delete(route);
    this.metrics.cellsLoaded.dec({ kind: cell.domain.kind });
  }

  /** Snapshot, release the lease, unload. Runs on the cell's lane after queued work. */
  deactivate(cell: AnyCell<T>): Promise<void> {
    const route = routeKey(cell.key);
    return cell.onLane(async () => {
      if (!cell.closed && (await cell.snapshot())) {
        await this.deps.lease.release(route, cell.leaseToken);
      }
      cell.close('deactivated');
    });
  }

  /**
   * Takes no new cells and hands the loaded ones over (finishes their queued batches,
   * snapshots, releases each lease so another node takes the room at once), within
   * `drainTimeoutMs`; the node stays up and serves again after {@link CellHost.undrain}.
   * While it runs, and after, the same hand-over is returned.
   */
  handOver(): Promise<HandOverReport> {
    if (this.state === 'running') {
      this.state = 'draining';
      this.handingOver = this.runHandOver().then((report) => {
        if (this.state === 'draining') this.state = 'drained';
        this.logger.info(report, 'cell host handed its cells over');
        return report;
      });
    }
    if (this.handingOver && (this.state === 'draining' || this.state === 'drained')) {
      return this.handingOver;
    }
    return Promise.reject(errors.NODE_DRAINING(this.nodeId));
  }

  /** Takes cells again after {@link CellHost.handOver} (once it finished). Not after drain(). */
  async undrain(): Promise<void> {
    if (this.state === 'running') return;
    if (this.state === 'draining') await this.handingOver;
    if (this.state !== 'drained') throw errors.NODE_DRAINING(this.nodeId);
    this.state = 'running';
    this.handingOver = null;
    this.logger.info('cell host serving again');
  }

  private async runHandOver(): Promise<HandOverReport> {
    const started = performance.now();
    // Activations already under way see the state and give their lease back.
    await Promise.allSettled([...this.activating.values()]);
    const cells = this.loadedCells;
    const handOver = Promise.allSettled(cells.map((cell) => this.deactivate(cell)));
    const timedOut = await Promise.race([
      handOver.then(() => false),
      sleep(this.config.drainTimeoutMs).then(() => true),
    ]);
    if (timedOut) this.logger.warn('drain deadline passed; remaining cells are left to their TTL');
    return { cells: cells.length, timedOut, tookMs: Math.round(performance.now() - started) };
  }

  /**
   * Stops for good: refuses new commands, finishes in-flight batches, snapshots, releases
   * every lease and deregisters the node, within `drainTimeoutMs`. Idempotent.
   */
  drain(): Promise<void> {
    this.drained ??= this.runDrain();
    return this.drained;
  }

  private async runDrain(): Promise<void> {
    if (this.state === 'new') {
      this.state = 'stopped';
      return;
    }
    const earlier = this.handingOver;
    this.state = 'stopping';
    await this.background?.stop();
    const { timedOut } = await (earlier ?? this.runHandOver());
    // Cells an earlier hand-over left behind at its deadline: their leases expire by TTL.
    if (this.ownsCells) {
      await this.deps.registry.deregister(this.nodeId).catch((err: unknown) => {
        this.logger.warn({ err }, 'deregister failed');
      });
    }
    this.state = 'stopped';
    this.logger.info({ timedOut }, 'cell host drained');
  }

  /**
   * Stops at once, as if the process died: no snapshot, no release; queued commands fail.
   * Used on fatal errors; the leases expire by TTL and the SQL fence guards the rest.
   */
  async abort(): Promise<void> {
    this.state = 'stopped';
    this.drained ??= Promise.resolve();
    await this.background?.stop();
    for (const cell of this.loadedCells) cell.close('aborted');
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
