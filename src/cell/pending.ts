/**
 * How a queued command's caller is answered: with an outcome (its own, or a copy's), or with
 * the refusal of a cell that stopped, a caller who gave up or a request id used for another
 * request.
 */
import { errors } from '../shared/error-codes.js';
import { AppError } from '../shared/errors.js';
import { sameRequest, type Outcome, type RecordedOutcome } from './batch.js';
import type { Pending } from './cell-types.js';

/**
 * A request id that already has an outcome: the same request gets that answer again; another
 * operation or body under the same id is refused, and the first outcome stays as it was.
 */
export function answerCopy(p: Pending<unknown>, known: RecordedOutcome): void {
  if (sameRequest(known, p.fingerprint)) settle([p], known.outcome, true);
  else p.reject(reusedError());
}

/** Copies of one request id after the first (a retry racing it) are duplicates too. */
export function settle(
  group: readonly Pending<unknown>[],
  outcome: Outcome,
  duplicate: boolean,
): void {
  group.forEach((p, i) => {
    if (!outcome.ok) p.reject(AppError.from(outcome.error));
    else if (duplicate || i > 0) p.resolve({ ...outcome.result, duplicate: true });
    else p.resolve(outcome.result);
  });
}

export function isLockConflict(error: unknown): boolean {
  return error instanceof AppError && error.code === errors.DATABASE_LOCK_CONFLICT.code;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function deadlineError(): AppError {
  return errors.DEADLINE_EXCEEDED('the caller stopped waiting; nothing was done');
}

export function reusedError(): AppError {
  return errors.REQUEST_ID_REUSED();
}

export function closedError(): AppError {
  return errors.CELL_FENCED();
}
