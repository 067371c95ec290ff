/**
 * Activation: a room not loaded anywhere becomes a cell on this node. EnsureOwner in Redis,
 * then the SQL `lease_epoch` bump (which fences every earlier owner) with the snapshot and the
 * log after it, replayed through the kind's `evolve`; the cell then joins the host's loaded
 * cells. {@link CellHost.activate} shares one activation between concurrent callers.
 */
import { errors } from '../shared/error-codes.js';
import { AppError, type DomainError } from '../shared/errors.js';
import { Cell } from './cell.js';
import type { ActivatedCell, StoreTypes } from './cell-store.js';
import type { DomainEvent } from './domain.js';
import type { AnyCell, AnyDomain } from './host-types.js';
import type { CellHost } from './host.js';
import type { CellKey } from './lease.js';

/** What activation changes of the host's own state, which only the host touches. */
export interface ActivationHooks<T extends StoreTypes> {
  /** A loaded cell's lease was gone at its commit: see {@link LeaseRenewals.reclaim}. */
  reclaimLease(route: string): Promise<string | null>;
  /** Adds a cell just activated to the host's loaded cells. */
  adopt(route: string, cell: AnyCell<T>): void;
  /** Drops a cell from memory (after fencing or deactivation). */
  forget(route: string, cell: AnyCell<T>): void;
}

/**
 * The room's cell, loaded here, or the node whose lease it is. A lease granted here and not
 * used (no row, a gap in the log, a drain begun meanwhile) is given back.
 */
export async function loadCell<T extends StoreTypes>(
  host: CellHost<T>,
  hooks: ActivationHooks<T>,
  domain: AnyDomain<T>,
  key: CellKey,
  route: string,
  create: boolean,
): Promise<AnyCell<T> | { ownerNodeId: string }> {
  const { lease, store, clock } = host.deps;
  const askedAtMs = host.leases.now();
  const granted = await lease.ensureOwner(route, host.nodeId, host.config.leaseTtlMs);
  if (!granted.granted) return { ownerNodeId: granted.ownerNodeId };
  host.forgetRoute(key);
  try {
    const [loaded] = await Promise.all([
      store.activate(key, domain.kind, host.nodeId, clock.nowMs(), create, {
        confirmOwner: () => lease.verifyOwner(route, granted.token),
      }),
      registeredForForwarding(host),
    ]);
    if (!loaded) throw new MissingCell(domain.notFound);
    const { state, version } = replayActivated(domain, key, loaded);
    if (!host.isServing) throw errors.NODE_DRAINING(host.nodeId);
    const logger = host.logger.child({ room: route.replace('\u0000', '/') });
    const cell: AnyCell<T> = new Cell(
      key,
      domain,
      {
        state,
        version,
        snapshotVersion: loaded.snapshotVersion,
        snapshotBytes: loaded.snapshot?.length ?? 0,
        leaseEpoch: loaded.leaseEpoch,
        leaseToken: granted.token,
        persisted: loaded.persisted,
      },
      {
        store,
        metrics: host.metrics,
        logger,
        nodeId: host.nodeId,
        nowMs: () => clock.nowMs(),
        verifyOwner: (token) => lease.verifyOwner(route, token),
        reclaimLease: () => hooks.reclaimLease(route),
        snapshotEvery: host.config.snapshotEvery,
        maxBatch: host.config.maxBatch,
      },
    );
    const { onCommitted } = host.deps;
    if (onCommitted) cell.observer.on('commit', onCommitted);
    cell.observer.once('close', () => hooks.forget(route, cell));
    host.leases.held(cell, askedAtMs);
    hooks.adopt(route, cell);
    host.metrics.cellsLoaded.inc({ kind: domain.kind });
    logger.debug({ version, epoch: loaded.leaseEpoch }, 'cell activated');
    return cell;
  } catch (error) {
    await lease.release(route, granted.token).catch(() => false);
    throw error;
  }
}

/** The room's state from its snapshot (or the kind's initial state) and the log after it. */
export function replayActivated<T extends StoreTypes>(
  domain: AnyDomain<T>,
  key: CellKey,
  loaded: ActivatedCell,
): { readonly state: unknown; readonly version: number } {
  let state =
    loaded.snapshot === null ? domain.initialState(key) : snapshotState(domain, loaded.snapshot);
  let version = loaded.snapshotVersion;
  for (const row of loaded.log) {
    for (const event of JSON.parse(row.events) as DomainEvent[])
      state = domain.evolve(state, event);
    version = row.version;
  }
  if (version !== loaded.version) {
    throw errors.LOG_GAP(version, loaded.version);
  }
  return { state, version };
}

/** A stored snapshot's state, read by its kind (which knows the shapes its state had). */
function snapshotState<T extends StoreTypes>(domain: AnyDomain<T>, json: string): unknown {
  const stored = JSON.parse(json) as unknown;
  return domain.fromSnapshot ? domain.fromSnapshot(stored) : stored;
}

/**
 * A lease just granted is only reachable through this node's registry entry, which Redis
 * may have lost with the lease (FLUSHALL, a restart): other nodes would answer
 * OWNER_UNREACHABLE until the next heartbeat. Written again with every grant; a failure
 * only delays forwarding, so the room still loads.
 */
export async function registeredForForwarding<T extends StoreTypes>(
  host: CellHost<T>,
): Promise<void> {
  await host.registerSelf().catch((err: unknown) => {
    host.logger.warn({ err }, 'registering the node after taking a lease failed');
  });
}

/** The room has no row and the command may not create one. */
export class MissingCell extends AppError {
  constructor(error?: DomainError) {
    super(
      error?.kind ?? 'not_found',
      error?.code ?? 'ROOM_NOT_FOUND',
      error?.message ?? 'room not found',
    );
  }
}
