/**
 * Corruptions of a real run's rows and histories, one per invariant, each of what the
 * invariant exists to catch: a run that passes must fail the named invariant once one is
 * applied, which shows the checker is not vacuous on real data. Each returns null when the
 * run has nothing to corrupt that way (e.g. no refused request), which the test treats as
 * a failure of the run, not a pass.
 */
import type { Observed, Rows } from './check/types.js';
import { firstAnswer, isFinal, type RequestRecord } from './history.js';

export interface Mutation {
  readonly what: string;
  /** The invariant (its name in the report) that must go red. */
  readonly invariant: string;
  apply(rows: Rows, observed: Observed): { rows: Rows; observed: Observed } | null;
}

/** `observed` with one request's attempts replaced. */
function withAttempts(
  observed: Observed,
  target: RequestRecord,
  attempts: RequestRecord['attempts'],
): Observed {
  const requests = observed.requests.map((r) => (r === target ? { ...r, attempts } : r));
  return { ...observed, requests };
}

const VERSIONS = 'one commit per (room, version), no gap';
const ACKNOWLEDGED = 'every acknowledged command in the log once, at its version';
const RETRIES = 'every retry answered with the first answer';
const REFUSED = 'no command acknowledged as failed found committed';
const WALLETS = 'every wallet = top-ups − sent + received';
const SEATS = 'no seat with two users, no user with two seats';
const OUTBOX = 'every committed outbox event delivered, first deliveries in room order';
const MEETINGS = 'every meeting user active in at most one meeting';

export const MUTATIONS: readonly Mutation[] = [
  {
    what: 'a second commit at a version',
    invariant: VERSIONS,
    apply(rows, observed) {
      const row = rows.log.find((r) => r.version > 1);
      return row
        ? { rows: { ...rows, log: [...rows.log, { ...row, requestId: 'forged' }] }, observed }
        : null;
    },
  },
  {
    what: 'a version missing from the log',
    invariant: VERSIONS,
    apply(rows, observed) {
      const row = rows.log.find((r) => r.version === 2);
      return row ? { rows: { ...rows, log: rows.log.filter((r) => r !== row) }, observed } : null;
    },
  },
  {
    what: 'an acknowledged command told another version than it committed at',
    invariant: ACKNOWLEDGED,
    apply(rows, observed) {
      const target = observed.requests.find((r) => {
        const a = firstAnswer(r);
        return r.api === 'voice' && a?.ok === true && typeof a.reply.room_version === 'number';
      });
      if (!target) return null;
      const attempts = target.attempts.map((a) =>
        a.answer.ok
          ? {
              ...a,
              answer: {
                ok: true as const,
                reply: {
                  ...a.answer.reply,
                  room_version: Number(a.answer.reply.room_version) + 1000,
                },
              },
            }
          : a,
      );
      return { rows, observed: withAttempts(observed, target, attempts) };
    },
  },
  {
    what: 'a retry answered otherwise than the first time',
    invariant: RETRIES,
    apply(rows, observed) {
      const target = observed.requests.find(
        (r) => r.attempts.filter((a) => isFinal(a.answer)).length > 1,
      );
      if (!target) return null;
      let seen = 0;
      const attempts = target.attempts.map((a) =>
        isFinal(a.answer) && seen++ === 1
          ? { ...a, answer: { ok: false as const, kind: 'illegal_state', code: 'FORGED' } }
          : a,
      );
      return { rows, observed: withAttempts(observed, target, attempts) };
    },
  },
  {
    what: 'a refused command found in the log',
    invariant: REFUSED,
    apply(rows, observed) {
      const target = observed.requests.find(
        (r) => r.api === 'voice' && r.room !== null && firstAnswer(r)?.ok === false,
      );
      if (!target) return null;
      const row = {
        app: target.app,
        room: target.room!,
        version: 1_000_000,
        requestId: target.logRequestId,
        commandType: target.method,
        events: [],
      };
      return { rows: { ...rows, log: [...rows.log, row] }, observed };
    },
  },
  {
    what: 'a wallet balance changed',
    invariant: WALLETS,
    apply(rows, observed) {
      const wallet = rows.wallets[0];
      if (!wallet) return null;
      return {
        rows: {
          ...rows,
          wallets: rows.wallets.map((w) => (w === wallet ? { ...w, balance: w.balance + 1 } : w)),
        },
        observed,
      };
    },
  },
  {
    what: 'a seat given to a second user',
    invariant: SEATS,
    apply(rows, observed) {
      const row = rows.log.find((r) => r.events.some((e) => e.type === 'MicTakenUp'));
      if (!row) return null;
      const taken = row.events.find((e) => e.type === 'MicTakenUp')!;
      const second = { ...taken, user_id: `${String(taken.user_id)}-other` };
      return {
        rows: {
          ...rows,
          log: rows.log.map((r) => (r === row ? { ...r, events: [...r.events, second] } : r)),
        },
        observed,
      };
    },
  },
  {
    what: 'an outbox event never delivered',
    invariant: OUTBOX,
    apply(rows, observed) {
      const event = rows.outbox[0];
      if (!event) return null;
      return {
        rows,
        observed: {
          ...observed,
          deliveries: observed.deliveries.filter((d) => d.eventId !== event.eventId),
        },
      };
    },
  },
  {
    what: "a room's event first sent before the previous one was delivered",
    invariant: OUTBOX,
    apply(rows, observed) {
      const [a, b] = [...rows.outbox]
        .filter((o) => o.room === rows.outbox[0]?.room)
        .sort((x, y) => x.id - y.id);
      if (!a || !b) return null;
      // The later event's deliveries all move to the very start of the run.
      const moved = observed.deliveries.filter((d) => d.eventId === b.eventId);
      const rest = observed.deliveries.filter((d) => d.eventId !== b.eventId);
      const deliveries = [...moved, ...rest].map((d, seq) => ({ ...d, seq }));
      return { rows, observed: { ...observed, deliveries } };
    },
  },
  {
    what: 'a user joined to two meetings',
    invariant: MEETINGS,
    apply(rows, observed) {
      const meetings = rows.cells.filter((c) => c.kind === 'meeting');
      if (meetings.length < 2) return null;
      const joins = meetings.map((m) => ({
        app: m.app,
        room: m.room,
        version: m.version + 1,
        requestId: 'forged-join',
        commandType: 'JoinMeeting',
        events: [{ type: 'MemberJoined', user_id: 'forged-user' }],
      }));
      const cells = rows.cells.map((c) =>
        c.kind === 'meeting' ? { ...c, version: c.version + 1 } : c,
      );
      return { rows: { ...rows, cells, log: [...rows.log, ...joins] }, observed };
    },
  },
];
