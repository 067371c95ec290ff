/**
 * How long a loaded cell may answer from memory, and its lease renewals. A cell answers
 * reads (room GETs, the access checks that gate WebSocket follows and media) without asking
 * Redis, which is only safe while no other node can have taken the room: until the lease it
 * last took or renewed could have expired. Past that (the process was paused, its renewals
 * lagged) the cell renews before it answers. A renewal is a compare-and-extend of the token
 * the cell holds: a lease that is gone or held by another token is lost, and the cell closes,
 * because another node may have loaded the room, committed and even released it meanwhile;
 * the next call loads it again from SQL (an activation, which bumps the lease epoch).
 */
import type { Cell } from './cell.js';
import { routeKey, type CellKey, type LeaseManager } from './lease.js';
import type { CellMetrics } from './metrics.js';

/** What a renewal uses of a cell, whatever its room kind. */
export type RenewableCell = Pick<
  Cell<unknown, never, never>,
  | 'key'
  | 'closed'
  | 'leaseToken'
  | 'setLeaseToken'
  | 'close'
  | 'onLane'
  | 'leaseEpoch'
  | 'isPersisted'
>;

export interface LeaseRenewalDeps {
  readonly lease: LeaseManager;
  readonly metrics: CellMetrics;
  readonly leaseTtlMs: number;
}

export class LeaseRenewals {
  readonly #deps: LeaseRenewalDeps;
  /** Monotonic time (ms) before which the cell's lease cannot have expired. */
  readonly #heldUntil = new WeakMap<object, number>();
  readonly #renewing = new WeakMap<object, Promise<void>>();

  constructor(deps: LeaseRenewalDeps) {
    this.#deps = deps;
  }

  /**
   * Now, on the clock {@link LeaseRenewals.held} counts in: monotonic, so a wall clock set
   * back cannot stretch a lease, and running on while the process is stopped.
   */
  now(): number {
    return performance.now();
  }

  /**
   * Records a lease taken or renewed by a request sent at `askedAtMs` (on
   * {@link LeaseRenewals.now}): Redis starts the TTL when it runs the request, later, so
   * counting from the send errs on the safe side.
   */
  held(cell: object, askedAtMs: number): void {
    this.#heldUntil.set(cell, askedAtMs + this.#deps.leaseTtlMs);
  }

  /** True while the cell's lease is sure to be still its own (no other node can hold it). */
  fresh(cell: object): boolean {
    const until = this.#heldUntil.get(cell);
    return until !== undefined && this.now() < until;
  }

  /**
   * Renews the cell's lease on its lane (so the token never changes under a commit that is
   * verifying it); closes the cell when the lease was lost or the renewal failed. Concurrent
   * callers share one renewal. Never rejects: the cell's `closed` tells the outcome.
   */
  renew(cell: RenewableCell): Promise<void> {
    const running = this.#renewing.get(cell);
    if (running) return running;
    const renewal = cell
      .onLane(() => this.#renewNow(cell))
      .finally(() => this.#renewing.delete(cell));
    this.#renewing.set(cell, renewal);
    return renewal;
  }

  /**
   * A commit found the cell's lease gone (Redis lost it, or it expired): takes it again
   * unless someone holds it, and answers the new token only if the SQL epoch is still the
   * cell's. Otherwise another node loaded the room meanwhile (it may have committed, then
   * lost or released the lease in turn): the cell's memory is stale, so the lease goes back
   * and null closes the cell; the next call loads the room again.
   */
  async reclaim(
    cell: RenewableCell,
    nodeId: string,
    leaseEpochOf: (key: CellKey) => Promise<number | null>,
  ): Promise<string | null> {
    const { lease, metrics, leaseTtlMs } = this.#deps;
    const route = routeKey(cell.key);
    const askedAtMs = this.now();
    const r = await lease.ensureOwner(route, nodeId, leaseTtlMs);
    if (!r.granted) return null;
    const epoch = await leaseEpochOf(cell.key).catch(() => undefined);
    const current = epoch === null ? !cell.isPersisted : epoch === cell.leaseEpoch;
    if (!current) {
      metrics.leaseRenewals.inc({ outcome: 'lost' });
      await lease.release(route, r.token).catch(() => false);
      return null;
    }
    this.held(cell, askedAtMs);
    metrics.leaseRenewals.inc({ outcome: 'reclaimed' });
    return r.token;
  }

  async #renewNow(cell: RenewableCell): Promise<void> {
    if (cell.closed) return;
    const { lease, metrics, leaseTtlMs } = this.#deps;
    const askedAtMs = this.now();
    try {
      const r = await lease.renew(routeKey(cell.key), cell.leaseToken, leaseTtlMs);
      if (r.renewed) {
        cell.setLeaseToken(r.token);
        this.held(cell, askedAtMs);
        metrics.leaseRenewals.inc({ outcome: 'renewed' });
        return;
      }
      metrics.leaseRenewals.inc({ outcome: 'lost' });
      cell.close(
        'fenced',
        r.ownerNodeId === null
          ? 'lease gone (expired, released or lost by Redis)'
          : `lease now held by ${r.ownerNodeId}`,
      );
    } catch (err) {
      metrics.leaseRenewals.inc({ outcome: 'error' });
      cell.close('fenced', `lease renewal failed: ${String(err)}`);
    }
  }
}
