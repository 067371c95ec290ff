/**
 * Sweeping meeting codes: an unknown code answers 404 `会议不存在` and a known one 400 (the
 * seed's answers), so a user who tries codes in turn would find every live meeting. Failed
 * lookups are counted per user and per client address; past either limit every code answers
 * 429, known or not, until the window ends, while other users elsewhere are served. The
 * WebSocket's `meeting.room.join` names codes too, and counts the same way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mediaSkipReason } from '../../media-server/testing/harness.js';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';
import { meetingClient } from '../api/testing/meeting-client.js';

describe('meeting code sweeps', () => {
  let app: TestHttpApp;
  const c = meetingClient(() => app.http);

  before(async () => {
    app = await startTestHttpApp({
      ROOMS_MEETING_LOOKUP_FAILS_PER_USER: '5',
      ROOMS_MEETING_LOOKUP_FAILS_PER_ADDRESS: '8',
      ROOMS_MEETING_LOOKUP_FAILURE_WINDOW_S: '600',
    });
    await c.users(['host', 'sweeper', 'p2', 'p3', 'guest']);
  });
  after(() => app?.close());

  /** A request from `address` as the named user. */
  const send = async (as: string, method: 'GET' | 'POST', path: string, address: string) => {
    const res = await app.http.inject({
      method,
      url: `/api/v1/meeting${path}`,
      remoteAddress: address,
      headers: {
        authorization: `Bearer ${c.tokens[as]}`,
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      },
      ...(method === 'POST' ? { payload: '{}' } : {}),
    });
    const body = res.json<{ code: number; message: string; reason?: string }>();
    return { status: res.statusCode, body, retryAfter: res.headers['retry-after'] };
  };
  const unknown = (i: number) => `999-000-${String(i).padStart(3, '0')}`;

  it('5 unknown codes from one user, then every code answers 429, a live one too', async () => {
    const created = await c.call('POST', '/meeting/rooms', { as: 'host', body: { title: '秘密' } });
    const live = created.body.data.room.room_code as string;
    for (let i = 0; i < 5; i++) {
      const r = await send('sweeper', 'GET', `/rooms/${unknown(i)}`, '10.0.0.1');
      assert.deepEqual([r.status, r.body.message], [404, '会议不存在']);
    }
    for (const [method, path] of [
      ['GET', `/rooms/${live}`],
      ['POST', `/rooms/${live}/join`],
      ['GET', `/rooms/${unknown(99)}`],
    ] as const) {
      const r = await send('sweeper', method, path, '10.0.0.1');
      assert.equal(r.status, 429, `${method} ${path}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.reason, 'MEETING_LOOKUP_RATE_LIMITED');
      assert.ok(Number(r.retryAfter) >= 1);
    }
    // The same user from another address is the same user: still refused.
    const moved = await send('sweeper', 'POST', `/rooms/${live}/join`, '10.0.0.2');
    assert.equal(moved.status, 429);
    // Others are served: a guest joins the live meeting.
    const guest = await send('guest', 'POST', `/rooms/${live}/join`, '10.0.0.3');
    assert.equal(guest.status, 200, JSON.stringify(guest.body));
    assert.equal((await send('guest', 'POST', `/rooms/${live}/leave`, '10.0.0.3')).status, 200);
  });

  it('one address: 8 unknown codes over two users, then both answer 429', async () => {
    const created = await c.call('POST', '/meeting/rooms', {
      as: 'guest',
      body: { title: '另一个' },
    });
    const live = created.body.data.room.room_code as string;
    for (let i = 0; i < 8; i++) {
      const who = i % 2 ? 'p3' : 'p2';
      const r = await send(who, 'GET', `/rooms/${unknown(100 + i)}`, '10.0.9.9');
      assert.equal(r.status, 404, `lookup ${i}: ${JSON.stringify(r.body)}`);
    }
    // Each has 4 failures of its own, under the user limit: the address is over its limit.
    const r = await send('p2', 'POST', `/rooms/${live}/join`, '10.0.9.9');
    assert.deepEqual([r.status, r.body.reason], [429, 'MEETING_LOOKUP_RATE_LIMITED']);
    // p3 from another address is within both limits: the seed's answers again.
    const elsewhere = await send('p3', 'POST', `/rooms/${live}/join`, '10.0.7.7');
    assert.equal(elsewhere.status, 200, JSON.stringify(elsewhere.body));
    const missing = await send('p3', 'GET', `/rooms/${unknown(200)}`, '10.0.7.7');
    assert.deepEqual([missing.status, missing.body.message], [404, '会议不存在']);
  });
});

describe('meeting code sweeps over /ws', { skip: mediaSkipReason() }, () => {
  let started: MeetingNode;
  before(async () => {
    started = await startMeetingNode(['owner', 'prober', 'member'], {
      ROOMS_MEETING_LOOKUP_FAILS_PER_USER: '3',
    });
  });
  after(() => started?.close());

  it('meeting.room.join counts unknown codes; past the limit a live code is refused too', async () => {
    const { api } = started;
    const created = await api.call('POST', '/meeting/rooms', {
      as: 'owner',
      body: { title: 'ws' },
    });
    const live = created.body.data.room.room_code as string;
    const prober = await started.socket('prober');
    for (let i = 0; i < 3; i++) {
      const ack = await prober.request('meeting.room.join', { room_code: `999-111-00${i}` });
      assert.deepEqual([ack.code, ack.message], [-1, '会议不存在']);
    }
    const ack = await prober.request('meeting.room.join', { room_code: live });
    assert.equal(ack.code, -1);
    assert.equal(ack.reason, 'MEETING_LOOKUP_RATE_LIMITED', JSON.stringify(ack));
    // A member of the meeting is served.
    await api.call('POST', `/meeting/rooms/${live}/join`, { as: 'member', body: {} });
    const member = await started.socket('member');
    assert.equal((await member.request('meeting.room.join', { room_code: live })).code, 0);
  });
});
