/**
 * Seat applications on two nodes (MariaDB + Redis), through REST as clients call it: two
 * approvals for the last seat sent at once to different nodes give one seat holder and one
 * refusal, and each request id answers the same on the other node; an approval racing the
 * applicant's leave ends in one order, never with a seat held by someone absent; an
 * invitation accepted while its seat is being locked leaves the seat locked and empty; and
 * an application expires on its own (a deadline of the room's cell).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { GrpcForwarder } from '../../edge/grpc/room-service.js';
import type { MeetingClient } from '../../meeting/api/testing/meeting-client.js';
import { clusterSkipReason } from '../../testing/backends.js';
import {
  okData,
  sameAnswer,
  startTwoNodes,
  type Answer,
  type TwoNodes,
} from './testing/two-nodes.js';

const skip = await clusterSkipReason();
const TTL_MS = 1_500;

describe('voice-room seat applications on two nodes', { skip, timeout: 120_000 }, () => {
  let cluster: TwoNodes;
  let nodes: TwoNodes['nodes'];
  let api: MeetingClient;
  let GRPC_TOKEN = '';

  before(async () => {
    cluster = await startTwoNodes('seat-applications', ['ona', 'adam', 'ulla', 'uwe', 'ida'], {
      ROOMS_SEAT_APPLICATION_TTL_MS: String(TTL_MS),
    });
    ({ nodes, api, grpcToken: GRPC_TOKEN } = cluster);
  });
  after(() => cluster?.close());

  const on = (node: 0 | 1, who: string, path: string, body: object = {}): Promise<Answer> =>
    api.call('POST', `/voice/rooms${path}`, { as: who, body, via: nodes[node].http });
  const ok = okData;
  const same = sameAnswer;
  const duplicateOf = (answer: Answer) =>
    (answer.body.data as { duplicate?: boolean } | undefined)?.duplicate;
  const room = async (id: string) => {
    const res = await api.call('GET', `/voice/rooms/${id}`, { as: 'ona' });
    return res.body.data as {
      seats: { user_id: number | null }[];
      members: { user_id: number }[];
      seat_application_count: number;
    };
  };
  /** A room in apply mode with `seats` seats, adam its admin, and the others present. */
  const applyRoom = async (seats: number, present: string[]) => {
    const { room_id } = (await ok(
      on(0, 'ona', '', { title: '申请上麦', seat_count: seats, seat_mode: 'apply' }),
    )) as { room_id: string };
    for (const who of ['ona', 'adam', ...present]) await ok(on(0, who, `/${room_id}/join`));
    await ok(on(0, 'ona', `/${room_id}/admins`, { user_id: api.ids.adam, is_admin: true }));
    return room_id;
  };

  it('two approvals for the last seat on two nodes: one holder, one refusal, the same on retry', async () => {
    const roomId = await applyRoom(1, ['ulla', 'uwe']);
    for (const who of ['ulla', 'uwe']) await ok(on(1, who, `/${roomId}/seat-applications`));
    const approve = (node: 0 | 1, who: string, user: string, requestId: string) =>
      on(node, who, `/${roomId}/seat-applications/approve`, {
        user_id: api.ids[user],
        request_id: requestId,
      });
    const [first, second] = await Promise.all([
      approve(0, 'adam', 'ulla', 'approve-ulla'),
      approve(1, 'ona', 'uwe', 'approve-uwe'),
    ]);
    const answers = [first, second];
    const won = answers.filter((a) => a.status === 200);
    const lost = answers.filter((a) => a.status !== 200);
    assert.equal(won.length, 1, JSON.stringify(answers.map((a) => a.body)));
    assert.equal(lost[0]!.body.reason, 'NO_FREE_SEAT');
    const winner = first.status === 200 ? 'ulla' : 'uwe';
    const state = await room(roomId);
    assert.equal(state.seats[0]!.user_id, api.ids[winner]);
    assert.equal(state.seat_application_count, 1, "the other's application still waits");

    // Each request id answers its first outcome on the other node too.
    const [again1, again2] = await Promise.all([
      approve(1, 'adam', 'ulla', 'approve-ulla'),
      approve(0, 'ona', 'uwe', 'approve-uwe'),
    ]);
    assert.deepEqual(same(again1), same(first));
    assert.deepEqual(same(again2), same(second));
    assert.equal(duplicateOf(won[0]!), false);
    assert.equal(duplicateOf(first.status === 200 ? again1 : again2), true);
  });

  it('an approval racing the leave: one order, and no seat held by someone absent', async () => {
    const roomId = await applyRoom(2, ['ida']);
    await ok(on(0, 'ida', `/${roomId}/seat-applications`, { seat_index: 1 }));
    const [approved, left] = await Promise.all([
      on(0, 'ona', `/${roomId}/seat-applications/approve`, {
        user_id: api.ids.ida,
        request_id: 'approve-ida',
      }),
      on(1, 'ida', `/${roomId}/leave`, { request_id: 'leave-ida' }),
    ]);
    assert.equal(left.status, 200, JSON.stringify(left.body));
    if (approved.status !== 200) assert.equal(approved.body.reason, 'NO_SEAT_APPLICATION');
    const state = await room(roomId);
    assert.ok(!state.members.some((m) => m.user_id === api.ids.ida), 'ida left');
    assert.ok(!state.seats.some((s) => s.user_id === api.ids.ida), 'no seat holds ida');
    assert.equal(state.seat_application_count, 0);
    const retried = await on(1, 'ona', `/${roomId}/seat-applications/approve`, {
      user_id: api.ids.ida,
      request_id: 'approve-ida',
    });
    assert.deepEqual(same(retried), same(approved));
  });

  it('an invitation accepted while its seat is being locked: one outcome, the seat locked', async () => {
    const roomId = await applyRoom(2, ['ulla']);
    await ok(on(0, 'ona', `/${roomId}/seat-invitations`, { user_id: api.ids.ulla, seat_index: 1 }));
    const [accepted, lockedSeat] = await Promise.all([
      on(1, 'ulla', `/${roomId}/seat-invitations/accept`, { request_id: 'accept-ulla' }),
      on(0, 'adam', `/${roomId}/seats/lock`, { seat_index: 1, locked: true, request_id: 'lock-1' }),
    ]);
    assert.equal(lockedSeat.status, 200, JSON.stringify(lockedSeat.body));
    if (accepted.status !== 200) assert.equal(accepted.body.reason, 'SEAT_LOCKED');
    const state = await room(roomId);
    assert.equal(state.seats[1]!.user_id, null, 'a locked seat holds nobody');
    const retried = await on(0, 'ulla', `/${roomId}/seat-invitations/accept`, {
      request_id: 'accept-ulla',
    });
    assert.deepEqual(same(retried), same(accepted));
  });

  it('an application nobody decides expires on its own', async () => {
    const roomId = await applyRoom(2, ['uwe']);
    const applied = await ok(on(1, 'uwe', `/${roomId}/seat-applications`));
    assert.equal(applied.seat_index, null);
    const list = () =>
      api.call('GET', `/voice/rooms/${roomId}/seat-applications`, {
        as: 'adam',
      }) as Promise<Answer>;
    const pending = (await list()).body.data as { applications: { user_id: number }[] };
    assert.deepEqual(
      pending.applications.map((a) => a.user_id),
      [api.ids.uwe],
    );
    const refused = await api.call('GET', `/voice/rooms/${roomId}/seat-applications`, {
      as: 'uwe',
    });
    assert.deepEqual([refused.status, refused.body.reason], [403, 'NOT_ADMIN']);
    await sleep(TTL_MS + 1_500);
    const later = (await list()).body.data as { applications: unknown[] };
    assert.deepEqual(later.applications, []);
    // A plain MicUp is still refused in apply mode.
    const up = await on(1, 'uwe', `/${roomId}/mic/up`, { seat_index: 0 });
    assert.deepEqual([up.status, up.body.reason], [403, 'SEAT_APPLICATION_REQUIRED']);
  });

  it('takes the same calls over gRPC: an unset seat_index is any seat, and answers so', async () => {
    const roomId = await applyRoom(3, ['ulla', 'uwe']);
    const client = new GrpcForwarder({ token: GRPC_TOKEN, tls: null, markForwarded: false });
    const addr = `127.0.0.1:${nodes[1].voice.grpcPort}`;
    const ids = { ulla: String(api.ids.ulla), uwe: String(api.ids.uwe) };
    try {
      const anySeat = (await client.call(addr, 'ApplyForSeat', {
        room_id: roomId,
        request_id: 'grpc-apply-ulla',
        user_id: ids.ulla,
      })) as Record<string, unknown>;
      assert.equal(anySeat.seat_index, undefined, 'unset: any seat');
      const seatZero = (await client.call(addr, 'ApplyForSeat', {
        room_id: roomId,
        request_id: 'grpc-apply-uwe',
        user_id: ids.uwe,
        seat_index: 0,
      })) as Record<string, unknown>;
      assert.equal(seatZero.seat_index, 0, 'seat 0 is a seat, not unset');
      const listed = (await client.call(addr, 'ListSeatApplications', {
        room_id: roomId,
        user_id: String(api.ids.adam),
      })) as { applications: { user_id: string; seat_index?: number }[] };
      assert.deepEqual(
        listed.applications.map((a) => [a.user_id, a.seat_index]),
        [
          [ids.ulla, undefined],
          [ids.uwe, 0],
        ],
      );
      const approved = (await client.call(addr, 'ApproveSeatApplication', {
        room_id: roomId,
        request_id: 'grpc-approve-uwe',
        operator_user_id: String(api.ids.ona),
        user_id: ids.uwe,
      })) as Record<string, unknown>;
      assert.deepEqual([approved.seat_index, approved.state], [0, 'pending_publish']);
      await assert.rejects(
        client.call(addr, 'ApplyForSeat', { room_id: roomId, request_id: 'x', user_id: ids.uwe }),
        { code: 'ALREADY_ON_SEAT' },
      );
    } finally {
      client.close();
    }
  });
});
