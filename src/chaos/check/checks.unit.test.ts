/**
 * The chaos checker on small hand-made histories: each invariant passes on a consistent
 * history and fails, naming the culprit, on the corruption it exists to catch.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Answer, RequestRecord } from '../history.js';
import type { Delivery } from '../webhook-receiver.js';
import { runChecks } from './index.js';
import type { InvariantResult, LogRow, Observed, Rows } from './types.js';

const gift = {
  type: 'GiftSent',
  sender_user_id: 'u1',
  receiver_user_ids: ['u2'],
  gift_id: 'rose',
  count: 2,
  unit_price: 10,
  total_price: 20,
};
const log = (
  version: number,
  requestId: string,
  events: LogRow['events'],
  room = 'r1',
): LogRow => ({
  app: 'a',
  room,
  version,
  requestId,
  commandType: 'X',
  events,
});

function consistent(): { rows: Rows; observed: Observed } {
  const rows: Rows = {
    cells: [
      { app: 'a', room: 'r1', kind: 'voice_room', version: 4 },
      { app: 'a', room: 'm1', kind: 'meeting', version: 1 },
    ],
    log: [
      log(1, 'create', [{ type: 'RoomCreated' }]),
      log(2, 'up', [{ type: 'MicTakenUp', user_id: 'u1', seat_index: 0 }]),
      log(3, 'gift', [gift]),
      log(4, 'down', [{ type: 'MicReleased', user_id: 'u1', seat_index: 0 }]),
      log(1, '1001:join', [{ type: 'MemberJoined', user_id: '1001' }], 'm1'),
    ],
    outcomes: [
      { app: 'a', room: 'r1', requestId: 'up', version: 2, outcome: { reply: {} } },
      { app: 'a', room: 'r1', requestId: 'gift', version: 3, outcome: { reply: {} } },
      { app: 'a', room: 'r1', requestId: 'hb', version: 3, outcome: { reply: {} } },
      {
        app: 'a',
        room: 'r1',
        requestId: 'up2',
        version: 4,
        outcome: { error: { kind: 'illegal_state', code: 'SEAT_OCCUPIED' } },
      },
    ],
    outbox: [
      {
        id: 1,
        eventId: 'e1',
        app: 'a',
        room: 'r1',
        roomVersion: 2,
        type: 'MicTakenUp',
        status: 'delivered',
      },
      {
        id: 2,
        eventId: 'e2',
        app: 'a',
        room: 'r1',
        roomVersion: 3,
        type: 'GiftSent',
        status: 'delivered',
      },
    ],
    wallets: [
      { app: 'a', user: 'u1', balance: 80 },
      { app: 'a', user: 'u2', balance: 20 },
    ],
    ledger: [
      { app: 'a', requestId: 'top', kind: 'topup', user: 'u1', amount: 100, room: null },
      { app: 'a', requestId: 'gift', kind: 'gift', user: 'u1', amount: -20, room: 'r1' },
    ],
    activeMembers: [{ app: 'a', user: '1001', room: 'm1' }],
  };
  const ok = (reply: Record<string, unknown>): Answer => ({ ok: true, reply });
  const request = (
    seq: number,
    method: string,
    requestId: string,
    answers: Answer[],
    extra: Partial<RequestRecord> = {},
  ): RequestRecord => ({
    seq,
    client: 'c',
    api: 'voice',
    method,
    app: 'a',
    room: 'r1',
    requestId,
    logRequestId: requestId,
    body: {},
    attempts: answers.map((answer, i) => ({
      node: `n${i}`,
      startedAtMs: i,
      endedAtMs: i + 1,
      answer,
      resend: i > 0,
    })),
    ...extra,
  });
  const unavailable: Answer = { ok: false, kind: 'unavailable', code: 'CELL_FENCED' };
  const observed: Observed = {
    requests: [
      request(0, 'MicUp', 'up', [unavailable, ok({ room_version: 2, duplicate: false })]),
      request(1, 'SendGift', 'gift', [
        ok({ room_version: 3, balance: 80 }),
        ok({ room_version: 3, balance: 80, duplicate: true }),
      ]),
      request(2, 'RoomHeartbeat', 'hb', [ok({ room_version: 3 })]),
      request(3, 'MicUp', 'up2', [{ ok: false, kind: 'illegal_state', code: 'SEAT_OCCUPIED' }]),
      request(4, 'TopUp', 'top', [ok({ balance: 100 })], {
        api: 'topup',
        room: null,
        body: { amount: 100 },
      }),
      request(5, 'JoinMeeting', 'join', [ok({})], {
        api: 'meeting',
        room: 'm1',
        logRequestId: '1001:join',
      }),
    ],
    deliveries: [delivery(0, 'e1', false), delivery(1, 'e1', true), delivery(2, 'e2', true)],
  };
  return { rows, observed };
}

function delivery(seq: number, eventId: string, accepted: boolean): Delivery {
  return {
    seq,
    eventId,
    appCode: 'a',
    roomId: 'r1',
    roomVersion: 0,
    type: 'x',
    attempt: 1,
    accepted,
    atMs: seq,
  };
}

function failing(results: InvariantResult[]): string[] {
  return results.filter((r) => !r.pass).map((r) => r.name);
}

void describe('the chaos checker', () => {
  void it('passes a consistent history, having checked something under every invariant', () => {
    const { rows, observed } = consistent();
    const results = runChecks(rows, observed);
    assert.deepEqual(failing(results), [], JSON.stringify(results, null, 2));
    for (const r of results) assert.ok(r.checked > 0, `${r.name} checked nothing`);
  });

  const cases: [
    string,
    string,
    (rows: Rows, observed: Observed) => { rows: Rows; observed: Observed },
  ][] = [
    [
      'a version committed twice',
      'one commit per (room, version), no gap',
      (rows, observed) => ({
        rows: { ...rows, log: [...rows.log, log(3, 'other', [])] },
        observed,
      }),
    ],
    [
      'a version missing',
      'one commit per (room, version), no gap',
      (rows, observed) => ({
        rows: { ...rows, log: rows.log.filter((r) => r.version !== 4 || r.room !== 'r1') },
        observed,
      }),
    ],
    [
      'an acknowledged command lost',
      'every acknowledged command in the log once, at its version',
      (rows, observed) => ({
        rows: {
          ...rows,
          log: rows.log.map((r) => (r.requestId === 'up' ? { ...r, requestId: 'other' } : r)),
          outcomes: rows.outcomes.filter((o) => o.requestId !== 'up'),
        },
        observed,
      }),
    ],
    [
      'an acknowledged command told another version',
      'every acknowledged command in the log once, at its version',
      (rows, observed) => ({
        rows,
        observed: {
          ...observed,
          requests: observed.requests.map((r) =>
            r.requestId === 'hb'
              ? {
                  ...r,
                  attempts: [
                    { ...r.attempts[0]!, answer: { ok: true, reply: { room_version: 2 } } },
                  ],
                }
              : r,
          ),
        },
      }),
    ],
    [
      'a retry answered differently',
      'every retry answered with the first answer',
      (rows, observed) => ({
        rows,
        observed: {
          ...observed,
          requests: observed.requests.map((r) =>
            r.requestId === 'gift'
              ? {
                  ...r,
                  attempts: [
                    r.attempts[0]!,
                    {
                      ...r.attempts[1]!,
                      answer: { ok: true, reply: { room_version: 3, balance: 60 } },
                    },
                  ],
                }
              : r,
          ),
        },
      }),
    ],
    [
      'a refused command committed',
      'no command acknowledged as failed found committed',
      (rows, observed) => ({
        rows: {
          ...rows,
          log: [...rows.log, log(5, 'up2', [])],
          cells: rows.cells.map((c) => (c.room === 'r1' ? { ...c, version: 5 } : c)),
        },
        observed,
      }),
    ],
    [
      'a wallet off by one',
      'every wallet = top-ups − sent + received',
      (rows, observed) => ({
        rows: {
          ...rows,
          wallets: rows.wallets.map((w) => (w.user === 'u2' ? { ...w, balance: 21 } : w)),
        },
        observed,
      }),
    ],
    [
      'a seat given to a second user',
      'no seat with two users, no user with two seats',
      (rows, observed) => ({
        rows: {
          ...rows,
          log: rows.log.map((r) =>
            r.version === 3 && r.room === 'r1'
              ? {
                  ...r,
                  events: [...r.events, { type: 'MicTakenUp', user_id: 'u3', seat_index: 0 }],
                }
              : r,
          ),
        },
        observed,
      }),
    ],
    [
      'an event never delivered',
      'every committed outbox event delivered, first deliveries in room order',
      (rows, observed) => ({
        rows,
        observed: {
          ...observed,
          deliveries: observed.deliveries.filter((d) => d.eventId !== 'e2'),
        },
      }),
    ],
    [
      'an event sent before the previous one was delivered',
      'every committed outbox event delivered, first deliveries in room order',
      (rows, observed) => ({
        rows,
        observed: {
          ...observed,
          deliveries: [delivery(0, 'e1', false), delivery(1, 'e2', true), delivery(2, 'e1', true)],
        },
      }),
    ],
    [
      'a user active in two meetings',
      'every meeting user active in at most one meeting',
      (rows, observed) => ({
        rows: {
          ...rows,
          cells: [...rows.cells, { app: 'a', room: 'm2', kind: 'meeting', version: 1 }],
          log: [...rows.log, log(1, '1001:j2', [{ type: 'MemberJoined', user_id: '1001' }], 'm2')],
        },
        observed,
      }),
    ],
  ];
  for (const [what, invariant, corrupt] of cases) {
    void it(`fails "${invariant}" on ${what}`, () => {
      const { rows, observed } = consistent();
      const corrupted = corrupt(rows, observed);
      const results = runChecks(corrupted.rows, corrupted.observed);
      const result = results.find((r) => r.name === invariant)!;
      assert.equal(result.pass, false, JSON.stringify(result));
      assert.ok(result.counterexamples.length > 0);
    });
  }
});
