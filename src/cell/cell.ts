/**
 * One loaded room: its state, its mailbox and the pump that takes batches from it (what a
 * batch does is ./batch-runner.ts). Everything a cell does (batches, lease renewals,
 * snapshots) runs on one serial lane, so a renewal never swaps the lease token under a
 * commit that is verifying it. A cell stops once, for one reason, through
 * {@link Cell.close}; its observer tells the host, realtime and metrics.
 */
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { CommandResult } from './batch.js';
import { BatchRunner } from './batch-runner.js';
import type { CellEvents, CloseReason } from './cell-events.js';
import type { StoreTypes } from './cell-store.js';
import type { CellDeps, CellInit, CellStats, CommittedTip, Pending } from './cell-types.js';
import { Flight, takeBatch } from './flight.js';
import type { CellDomain, Command, DomainEvent } from './domain.js';
import type { CellKey } from './lease.js';
import { closedError, deadlineError } from './pending.js';
import { requestFingerprint } from './request-fingerprint.js';

export type { CommandResult } from './batch.js';
export type { CellEvents, CloseReason, CommittedBatch } from './cell-events.js';
export type { CellDeps, CellInit, CellStats } from './cell-types.js';

export class Cell<S, C extends Command, E extends DomainEvent, T extends StoreTypes = StoreTypes> {
  /** `commit` after every commit, in version order; `close` once. */
  readonly observer = new EventEmitter<CellEvents>();
  readonly #key: CellKey;
  readonly #domain: CellDomain<S, C, E, T>;
  readonly #deps: CellDeps<T>;
  readonly #leaseEpoch: number;
  /** The committed state and the lease token, shared with the batches. */
  readonly #tip: CommittedTip<S>;
  readonly #batches: BatchRunner<S, C, E, T>;
  #closed: CloseReason | null = null;
  #queue: Pending<C>[] = [];
  #scheduled = false;
  #lane: Promise<void> = Promise.resolve();
  /** Lane tasks waiting for their turn (the running one not counted). */
  #laneWaiting = 0;
  #lastActivityMs: number;

  constructor(key: CellKey, domain: CellDomain<S, C, E, T>, init: CellInit<S>, deps: CellDeps<T>) {
    this.#key = key;
    this.#domain = domain;
    this.#deps = deps;
    this.#leaseEpoch = init.leaseEpoch;
    this.#tip = {
      state: init.state,
      version: init.version,
      snapshotVersion: init.snapshotVersion,
      snapshotBytes: init.snapshotBytes,
      persisted: init.persisted,
      token: init.leaseToken,
    };
    this.#lastActivityMs = deps.nowMs();
    this.#batches = new BatchRunner(key, domain, deps, init.leaseEpoch, this.#tip, {
      isClosed: () => this.closed,
      close: (reason, detail) => this.close(reason, detail),
      requeue: (commands) => this.#queue.unshift(...commands),
      observer: this.observer,
    });
  }

  get key(): CellKey {
    return this.#key;
  }
  get domain(): CellDomain<S, C, E, T> {
    return this.#domain;
  }
  get currentState(): S {
    return this.#tip.state;
  }
  get currentVersion(): number {
    return this.#tip.version;
  }
  get leaseEpoch(): number {
    return this.#leaseEpoch;
  }
  get leaseToken(): string {
    return this.#tip.token;
  }
  get lastActivityMs(): number {
    return this.#lastActivityMs;
  }
  get snapshotVersion(): number {
    return this.#tip.snapshotVersion;
  }
  get stats(): CellStats {
    return this.#batches.stats;
  }
  /** Commands waiting for the next batch. */
  get queued(): number {
    return this.#queue.length;
  }
  /** True once closed, for whatever reason. */
  get closed(): boolean {
    return this.#closed !== null;
  }
  get closeReason(): CloseReason | null {
    return this.#closed;
  }
  /** False until the room's first batch with events inserted its row. */
  get isPersisted(): boolean {
    return this.#tip.persisted;
  }
  /** True while commands wait or a batch runs. */
  get busy(): boolean {
    return this.#scheduled || this.#queue.length > 0;
  }

  /**
   * Queues `command`. `fingerprint` names what the caller's request was (see
   * ./request-fingerprint.ts); without one, the command itself is what the request id names.
   */
  submit(
    command: C,
    requestId?: string,
    deadlineMs?: number,
    fingerprint?: string,
  ): Promise<CommandResult> {
    if (this.#closed) return Promise.reject(closedError());
    if (deadlineMs !== undefined && deadlineMs <= this.#deps.nowMs()) {
      return Promise.reject(deadlineError());
    }
    this.#lastActivityMs = this.#deps.nowMs();
    return new Promise<CommandResult>((resolve, reject) => {
      this.#queue.push({
        command,
        requestId: requestId ?? `auto:${randomUUID()}`,
        explicit: requestId !== undefined,
        // An id made up here names nothing a caller can send again: nothing to compare.
        fingerprint:
          requestId === undefined ? '' : (fingerprint ?? requestFingerprint('command', command)),
        deadlineMs,
        resolve,
        reject,
      });
      this.#schedule();
    });
  }

  /** Runs `task` on the cell's lane, after the work queued before it. */
  onLane<R>(task: () => Promise<R>): Promise<R> {
    this.#laneWaiting++;
    const run = this.#lane.then(() => {
      this.#laneWaiting--;
      return task();
    });
    this.#lane = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Replaces the lease token after a renewal (called on the lane). */
  setLeaseToken(token: string): void {
    this.#tip.token = token;
  }

  /** Stops the cell for good (idempotent): queued commands fail with UNAVAILABLE. */
  close(reason: CloseReason, detail: string = reason): void {
    if (this.#closed) return;
    this.#closed = reason;
    if (reason === 'fenced') {
      this.#deps.metrics.fenced.inc();
      this.#deps.logger.warn({ reason: detail }, 'cell fenced out');
    } else {
      this.#deps.logger.debug({ reason, detail }, 'cell closed');
    }
    const queued = this.#queue;
    this.#queue = [];
    for (const p of queued) p.reject(closedError());
    this.observer.emit('close', reason, detail);
    this.observer.removeAllListeners();
  }

  /** Writes a snapshot of the current state; false when fenced out. */
  async snapshot(): Promise<boolean> {
    if (this.#closed) return false;
    const tip = this.#tip;
    if (tip.snapshotVersion === tip.version) return true;
    const json = JSON.stringify(tip.state);
    const ok = await this.#deps.store.saveSnapshot(
      this.#key,
      this.#leaseEpoch,
      tip.version,
      json,
      this.#deps.nowMs(),
    );
    if (ok) {
      tip.snapshotVersion = tip.version;
      tip.snapshotBytes = json.length;
    }
    return ok;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    void this.onLane(async () => {
      try {
        await this.#pump();
      } finally {
        this.#scheduled = false;
      }
      if (this.#queue.length > 0) this.#schedule();
    });
  }

  /**
   * Runs the queued commands batch after batch. Where the store pipelines, the next batch
   * is decided while the one before is in the database and sent behind it (two in flight
   * at most; see flight.ts). Returns with nothing in flight, so the lane's other work
   * (renewals, snapshots, unloading) always finds the cell at rest, and takes no more
   * commands once such work waits (after a full batch's worth).
   */
  async #pump(): Promise<void> {
    let ahead: Flight<S> | null = null;
    let taken = 0;
    while (!this.#closed) {
      // A turn of the lane takes at least one full batch's worth, as it would unpipelined.
      const yielding = taken >= this.#deps.maxBatch && this.#laneWaiting > 0;
      const batch = yielding ? null : this.#take(ahead);
      if (!batch) {
        if (!ahead) return;
        await ahead.done;
        ahead = null;
        await nextTurn();
        continue;
      }
      const flight: Flight<S> = new Flight<S>(ahead);
      flight.start(() => this.#batches.run(batch, flight));
      taken += batch.length;
      await flight.sentOrDone();
      if (ahead) {
        await ahead.done;
        // The answered callers' next commands arrive before the next batch is taken.
        await nextTurn();
      }
      ahead = flight.inDatabase ? flight : null;
    }
    await ahead?.done;
  }

  #take(ahead: Flight<S> | null): Pending<C>[] | null {
    return takeBatch(this.#queue, ahead, {
      maxBatch: this.#deps.maxBatch,
      split: this.#deps.store.pipelines,
      inTransaction: (p) => this.#domain.inTransaction?.appliesTo(p.command) ?? false,
    });
  }
}
