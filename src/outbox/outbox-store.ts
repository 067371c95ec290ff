/**
 * Port of the outbox table as the relay sees it: claim a batch, settle what happened to
 * it, and the operator's view (list, re-queue, give up).
 *
 * Ordering contract of {@link OutboxStore.claim}: an event is claimed only when every
 * earlier event of its room (lower id, which is lower or equal room_version: a room's rows
 * are inserted in commit order) is settled (delivered, skipped or failed), or is claimed in
 * the same batch.
 *
 * Statuses: pending → delivering (claimed) → delivered (a 2xx), retryable (try again after
 * a backoff), failed (refused for good, out of attempts, or given up by an operator) or
 * skipped (the app had no webhook when the event was claimed: it was not sent). Failed and
 * skipped events can be re-queued; settled rows are deleted after a retention period.
 * So one room's events are never in flight on two workers, and a worker delivers a room's
 * claimed events one after the other.
 */
import type { OutboxStatus } from '../adapters/sql/schema.js';

/** One event a worker now holds until `lockUntilMs`. */
export interface ClaimedEvent {
  readonly id: number;
  readonly eventId: string;
  readonly appCode: string;
  readonly roomId: string;
  readonly roomVersion: number;
  /** The envelope JSON exactly as stored: the webhook body. */
  readonly envelope: string;
  /** Attempts recorded before this claim. */
  readonly attempts: number;
  readonly createdAtMs: number;
}

/** What a worker holds: the events, and the lock that fences its settlements. */
export interface Claim {
  readonly workerId: string;
  /** Also the claim's fencing token: a settlement must match it. */
  readonly lockUntilMs: number;
  /** In id order (so each room's events are in room_version order). */
  readonly events: readonly ClaimedEvent[];
}

export interface ClaimRequest {
  readonly workerId: string;
  readonly nowMs: number;
  readonly lockMs: number;
  /** Most events in the batch. */
  readonly limit: number;
  /** Most events of one room in the batch (they are delivered one after the other). */
  readonly perRoomLimit: number;
}

/** What happened to one claimed event. */
export type Settlement =
  /** The sink acknowledged it. */
  | { readonly kind: 'delivered'; readonly id: number }
  /** Not sent, and never will be unless re-queued: the app had no webhook. */
  | { readonly kind: 'skipped'; readonly id: number; readonly reason: string }
  | {
      readonly kind: 'retryable';
      readonly id: number;
      readonly error: string;
      readonly nextAttemptAtMs: number;
    }
  | { readonly kind: 'failed'; readonly id: number; readonly error: string }
  /** Not attempted (an earlier event of its room must go first, or the worker stops). */
  | { readonly kind: 'released'; readonly id: number };

/** A settlement together with the claim it belongs to. */
export interface FencedSettlement {
  readonly claim: Pick<Claim, 'workerId' | 'lockUntilMs'>;
  readonly settlement: Settlement;
}

/** One row as the admin API shows it. */
export interface OutboxRecord {
  readonly id: number;
  readonly eventId: string;
  readonly appCode: string;
  readonly roomId: string;
  readonly roomVersion: number;
  readonly eventType: string;
  readonly status: OutboxStatus;
  readonly attempts: number;
  readonly workerId: string | null;
  readonly lockUntilMs: number | null;
  readonly nextAttemptAtMs: number;
  readonly lastError: string | null;
  readonly envelope: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export interface OutboxListFilter {
  readonly status?: OutboxStatus;
  readonly appCode?: string;
  /** Keyset pagination: rows with a larger id. */
  readonly afterId?: number;
  readonly limit: number;
}

export interface OutboxStore {
  /**
   * ClaimPendingOutbox: atomically moves a batch from pending/retryable (or delivering
   * whose lock expired) to delivering, writing `worker_id` and `lock_until_ms`. Never
   * returns an event another worker holds under an unexpired lock.
   */
  claim(request: ClaimRequest): Promise<Claim>;
  /**
   * Applies settlements, each only while its claim still holds the row (status
   * delivering, same worker id and lock). Returns how many rows changed; fewer than given
   * means some claims were lost (the lock expired and another worker took the event).
   */
  settle(settlements: readonly FencedSettlement[], nowMs: number): Promise<number>;
  /** created_at_ms of the oldest event not yet settled, or null. */
  oldestUndeliveredAtMs(): Promise<number | null>;
  list(filter: OutboxListFilter): Promise<OutboxRecord[]>;
  /**
   * failed (or skipped, as `target.status` says; default failed) → pending with attempts
   * reset; last_error is kept. Returns the count.
   */
  requeue(target: RequeueTarget, nowMs: number): Promise<number>;
  /** An operator gives up on a pending or retryable event: → failed. */
  markFailed(eventId: string, reason: string, nowMs: number): Promise<boolean>;
  /**
   * Retention: deletes at most `limit` rows in one of `statuses` (settled ones only) last
   * changed before `updatedBeforeMs`. Returns how many were deleted.
   */
  deleteSettled(request: DeleteSettledRequest): Promise<number>;
}

/** Which dead letters or skipped events to re-queue. */
export interface RequeueTarget {
  readonly eventIds?: readonly string[];
  readonly appCode?: string;
  /** Default `failed`. */
  readonly status?: RequeueableStatus;
}

export type RequeueableStatus = Extract<OutboxStatus, 'failed' | 'skipped'>;

export interface DeleteSettledRequest {
  readonly statuses: readonly SettledStatus[];
  readonly updatedBeforeMs: number;
  readonly limit: number;
}

export type SettledStatus = Extract<OutboxStatus, 'delivered' | 'skipped' | 'failed'>;
