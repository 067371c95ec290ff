/**
 * The outbox against the webhook receiver: every committed event delivered (answered 2xx) at
 * least once, nothing delivered that was not committed, and each room's events first sent
 * in room order (outbox id order, which is version order).
 */
import {
  Verdict,
  groupBy,
  roomKey,
  type InvariantResult,
  type Observed,
  type Rows,
} from './types.js';

export function checkOutbox(rows: Rows, observed: Observed): InvariantResult {
  const verdict = new Verdict(
    'every committed outbox event delivered, first deliveries in room order',
  );
  const versions = new Set(rows.log.map((r) => `${roomKey(r.app, r.room)}@${r.version}`));
  const delivered = new Set(observed.deliveries.filter((d) => d.accepted).map((d) => d.eventId));
  const byId = new Map(rows.outbox.map((o) => [o.eventId, o]));
  for (const row of rows.outbox) {
    verdict.checked++;
    const where = `${roomKey(row.app, row.room)} v${row.roomVersion} ${row.type} ${row.eventId}`;
    if (!delivered.has(row.eventId))
      verdict.fail(`${where}: never delivered (status ${row.status})`);
    if (!versions.has(`${roomKey(row.app, row.room)}@${row.roomVersion}`)) {
      verdict.fail(`${where}: no committed version ${row.roomVersion} in the log`);
    }
  }
  for (const d of observed.deliveries) {
    if (!byId.has(d.eventId))
      verdict.fail(`delivery #${d.seq} of ${d.eventId}: no such outbox event`);
  }
  // An event is first sent only after the room's previous event (outbox id order) was
  // delivered: its first arrival comes after the previous one's first 2xx.
  const firstSent = new Map<string, number>();
  const firstDelivered = new Map<string, number>();
  for (const d of observed.deliveries) {
    if (!firstSent.has(d.eventId)) firstSent.set(d.eventId, d.seq);
    if (d.accepted && !firstDelivered.has(d.eventId)) firstDelivered.set(d.eventId, d.seq);
  }
  for (const [room, events] of groupBy(rows.outbox, (o) => roomKey(o.app, o.room))) {
    const ordered = [...events].sort((a, b) => a.id - b.id);
    for (let i = 1; i < ordered.length; i++) {
      const [before, after] = [ordered[i - 1]!, ordered[i]!];
      if (after.roomVersion < before.roomVersion) {
        verdict.fail(
          `${room}: outbox id ${after.id} (v${after.roomVersion}) after id ${before.id} (v${before.roomVersion})`,
        );
      }
      const sent = firstSent.get(after.eventId);
      const previous = firstDelivered.get(before.eventId);
      if (sent !== undefined && previous !== undefined && sent < previous) {
        verdict.fail(
          `${room}: v${after.roomVersion} ${after.type} first sent (#${sent}) before v${before.roomVersion} ${before.type} was delivered (#${previous})`,
        );
      }
    }
  }
  return verdict.result();
}
