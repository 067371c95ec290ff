/**
 * The cell host of one node: activates cells it can own, routes the rest to their owner,
 * and drains cleanly. Domain-agnostic: room kinds register a {@link CellDomain}.
 */
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { RouteCache } from './route-cache.js';
import { errors } from '../shared/error-codes.js';
import { AppError, type DomainError } from '../shared/errors.js';
import { Cell, type CommandResult, type CommittedBatch } from './cell.js';
import type { CellStore, StoreTypes } from './cell-store.js';
import type { CellDomain, Command, DomainEvent } from './domain.js';
import { routeKey, type CellKey, type LeaseManager, type NodeRegistry } from './lease.js';
import { createCellMetrics, type CellMetrics } from './metrics.js';
import { startBackgroundWork, type BackgroundWork } from './background.js';
import { LeaseRenewals } from './lease-renewal.js';

export interface CellHostConfig {
  readonly nodeId: string;
  /** This instance's own address, written to `room:node:{node_id}` for forwarding. */
  readonly advertiseAddr: string;
  readonly leaseTtlMs: number;
  /** A snapshot is written every N versions (and on deactivation). */
  readonly snapshotEvery: number;
  /** Most commands decided in one commit transaction. */
  readonly maxBatch: number;
  /** A cell with no command for this long is unloaded. */
  readonly idleAfterMs: number;
  readonly timerTickMs: number;
  readonly sweepIntervalMs: number;
  readonly drainTimeoutMs: number;
  /**
   * false: a node without the cells role. It never activates a cell, never registers in the
   * node registry, and runs no timers, renewals or sweeper; its edges send every call to the
   * cells tier (./cells-tier.ts). The host still carries the node's serving/draining state.
   */
  readonly ownsCells?: boolean;
}

export interface CellHostDeps<T extends StoreTypes = StoreTypes> {
  readonly store: CellStore<T>;
  readonly lease: LeaseManager;
  readonly registry: NodeRegistry;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics?: CellMetrics;
  /** Called after every commit of every cell on this node (the realtime bus publishes). */
  readonly onCommitted?: (batch: CommittedBatch) => void;
}

export interface ExecuteOptions {
  readonly requestId?: string;
  /** Set on a call another node forwarded: it must not be forwarded again. */
  readonly forwarded?: boolean;
  /**
   * When the caller stops waiting (ms, the host's clock). A command still queued then is
   * never decided: its caller was already told it failed, so it must not take effect.
   */
  readonly deadlineMs?: number;
  /**
   * What the request id names: the caller's operation and body (./request-fingerprint.ts).
   * The same id with another fingerprint is refused `REQUEST_ID_REUSED`.
   */
  readonly fingerprint?: string;
}

/** Either the answer, or where the room lives so the edge can forward. */
export type Routed<T> =
  | { readonly kind: 'local'; readonly value: T }
  | {
      readonly kind: 'remote';
      readonly nodeId: string;
      readonly addr: string;
      /** The route came from the host's short-lived cache (./route-cache.ts), not Redis. */
      readonly cached?: true;
    };

type AnyCell<T extends StoreTypes> = Cell<unknown, Command, DomainEvent, T>;
type AnyDomain<T extends StoreTypes> = CellDomain<unknown, Command, DomainEvent, T>;

/** What a hand-over did: how many cells it unloaded, whether its deadline cut it short. */
export interface HandOverReport {
  readonly cells: number;
  readonly timedOut: boolean;
  readonly tookMs: number;
}

/** Whether the host takes cells: `serving`, or why not. */
export type ServiceState = 'starting' | 'serving' | 'draining' | 'drained' | 'stopping' | 'stopped';

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
    const started = this.load(domain, key, route, create).finally(() =>
      this.activating.delete(route),
    );
    this.activating.set(route, started);
    return started;
  }

  private async load(
    domain: AnyDomain<T>,
    key: CellKey,
    route: string,
    create: boolean,
  ): Promise<AnyCell<T> | { ownerNodeId: string }> {
    const { lease, store, clock } = this.deps;
    const askedAtMs = this.leases.now();
    const granted = await lease.ensureOwner(route, this.nodeId, this.config.leaseTtlMs);
    if (!granted.granted) return { ownerNodeId: granted.ownerNodeId };
    this.routes.forget(route);
    try {
      const [loaded] = await Promise.all([
        store.activate(key, domain.kind, this.nodeId, clock.nowMs(), create, {
          confirmOwner: () => lease.verifyOwner(route, granted.token),
        }),
        this.registeredForForwarding(),
      ]);
      if (!loaded) throw new MissingCell(domain.notFound);
      let state =
        loaded.snapshot === null
          ? domain.initialState(key)
          : (JSON.parse(loaded.snapshot) as unknown);
      let version = loaded.snapshotVersion;
      for (const row of loaded.log) {
        for (const event of JSON.parse(row.events) as DomainEvent[])
          state = domain.evolve(state, event);
        version = row.version;
      }
      if (version !== loaded.version) {
        throw errors.LOG_GAP(version, loaded.version);
      }
      if (this.state !== 'running') throw errors.NODE_DRAINING(this.nodeId);
      const logger = this.logger.child({ room: route.replace('\u0000', '/') });
      const cell: AnyCell<T> = new Cell(
        key,
        domain,
        {
          state,
          version,
          snapshotVersion: loaded.snapshotVersion,
          leaseEpoch: loaded.leaseEpoch,
          leaseToken: granted.token,
          persisted: loaded.persisted,
        },
        {
          store,
          metrics: this.metrics,
          logger,
          nodeId: this.nodeId,
          nowMs: () => clock.nowMs(),
          verifyOwner: (token) => lease.verifyOwner(route, token),
          reclaimLease: () => this.reclaimLease(route),
          snapshotEvery: this.config.snapshotEvery,
          maxBatch: this.config.maxBatch,
        },
      );
      const { onCommitted } = this.deps;
      if (onCommitted) cell.observer.on('commit', onCommitted);
      cell.observer.once('close', () => this.forget(route, cell));
      this.leases.held(cell, askedAtMs);
      this.cells.set(route, cell);
      this.metrics.cellsLoaded.inc({ kind: domain.kind });
      logger.debug({ version, epoch: loaded.leaseEpoch }, 'cell activated');
      return cell;
    } catch (error) {
      await lease.release(route, granted.token).catch(() => false);
      throw error;
    }
  }

  /** Writes `room:node:{node_id}` (start, heartbeat, and whenever this node takes a lease). */
  registerSelf(): Promise<void> {
    const { nodeId, advertiseAddr, leaseTtlMs } = this.config;
    return this.deps.registry.register(nodeId, advertiseAddr, leaseTtlMs);
  }

  /**
   * A lease just granted is only reachable through this node's registry entry, which Redis
   * may have lost with the lease (FLUSHALL, a restart): other nodes would answer
   * OWNER_UNREACHABLE until the next heartbeat. Written again with every grant; a failure
   * only delays forwarding, so the room still loads.
   */
  private async registeredForForwarding(): Promise<void> {
    await this.registerSelf().catch((err: unknown) => {
      this.logger.warn({ err }, 'registering the node after taking a lease failed');
    });
  }

  /** A loaded cell's lease was gone at its commit: see {@link LeaseRenewals.reclaim}. */
  private async reclaimLease(route: string): Promise<string | null> {
    const cell = this.cells.get(route);
    if (this.state !== 'running' || !cell) return null;
    const token = await this.leases.reclaim(cell, this.nodeId, (key) =>
      this.deps.store.leaseEpochOf(key),
    );
    if (token) await this.registeredForForwarding();
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

/** The room has no row and the command may not create one. */
class MissingCell extends AppError {
  constructor(error?: DomainError) {
    super(
      error?.kind ?? 'not_found',
      error?.code ?? 'ROOM_NOT_FOUND',
      error?.message ?? 'room not found',
    );
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
