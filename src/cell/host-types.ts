/**
 * The cell host's public types: its config and dependencies, the options of a call, a
 * routed answer, and what draining reports. Re-exported from ./host.ts.
 */
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import type { Cell, CommittedBatch } from './cell.js';
import type { CellStore, StoreTypes } from './cell-store.js';
import type { CellDomain, Command, DomainEvent } from './domain.js';
import type { LeaseManager, NodeRegistry } from './lease.js';
import type { CellMetrics } from './metrics.js';

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

/** What a hand-over did: how many cells it unloaded, whether its deadline cut it short. */
export interface HandOverReport {
  readonly cells: number;
  readonly timedOut: boolean;
  readonly tookMs: number;
}

/** Whether the host takes cells: `serving`, or why not. */
export type ServiceState = 'starting' | 'serving' | 'draining' | 'drained' | 'stopping' | 'stopped';

/** A loaded cell or a registered kind, whatever its state, commands and events. */
export type AnyCell<T extends StoreTypes> = Cell<unknown, Command, DomainEvent, T>;
export type AnyDomain<T extends StoreTypes> = CellDomain<unknown, Command, DomainEvent, T>;
