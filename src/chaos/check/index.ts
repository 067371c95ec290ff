/** Every invariant of the chaos run, in the report's order. */
import { checkAcknowledged, checkRefusedNotCommitted, checkRetries, checkVersions } from './log.js';
import { checkSingleMeeting } from './meetings.js';
import { checkOutbox } from './outbox.js';
import { checkSeats } from './seats.js';
import type { InvariantResult, Observed, Rows } from './types.js';
import { checkWallets } from './wallets.js';

export function runChecks(rows: Rows, observed: Observed): InvariantResult[] {
  return [
    checkVersions(rows),
    checkAcknowledged(rows, observed),
    checkRetries(rows, observed),
    checkRefusedNotCommitted(rows, observed),
    checkWallets(rows),
    checkSeats(rows),
    checkOutbox(rows, observed),
    checkSingleMeeting(rows),
  ];
}
