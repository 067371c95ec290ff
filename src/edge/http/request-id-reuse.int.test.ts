/**
 * A request id names one request (DESIGN invariant 3), on REST: the same id sent with another
 * endpoint or another body is refused 409 `REQUEST_ID_REUSED` and changes nothing, never
 * answered with the first request's result; the plain retry still gets its first answer.
 * Across nodes and after the owner's kill -9: ../../meeting/wiring/meeting-cluster.e2e.test.ts and
 * ../grpc/voice-cluster.e2e.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';
import { meetingClient } from '../../meeting/api/testing/meeting-client.js';

describe('a request id used for another request (REST)', () => {
  let app: TestHttpApp;
  const c = meetingClient(() => app.http);
  const key = (k: string) => ({ 'idempotency-key': k });
  const reused = (r: { status: number; body: { code: number; reason?: string } }) => {
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.deepEqual([r.body.code, r.body.reason], [409, 'REQUEST_ID_REUSED']);
  };

  before(async () => {
    app = await startTestHttpApp();
    await c.users(['host', 'guest', 'fan']);
  });
  after(async () => {
    await app?.close();
  });

  it('meetings: a create’s key sent to chat, leave or another create is refused, and nothing moves', async () => {
    const create = (title: string) =>
      c.call('POST', '/meeting/rooms', { as: 'host', body: { title }, headers: key('k1') });
    const first = await create('周会');
    assert.equal(first.status, 201);
    const code = first.body.data.room.room_code as string;
    const inRoom = (path: string, body: object, as = 'host', k = 'k1') =>
      c.call('POST', `/meeting/rooms/${code}/${path}`, { as, body, headers: key(k) });

    reused(await inRoom('chats', { content: 'hello' }));
    reused(await inRoom('leave', {}));
    reused(await create('another title'));
    // The body's request_id names the same request as the header.
    reused(
      await c.call('POST', `/meeting/rooms/${code}/chats`, {
        as: 'host',
        body: { content: 'hi', request_id: 'k1' },
      }),
    );
    const retried = await create('周会');
    assert.equal(retried.status, 201);
    assert.deepEqual(retried.body.data, first.body.data);

    const detail = await c.call('GET', `/meeting/rooms/${code}`, { as: 'host' });
    assert.equal(detail.body.data.online_count, 1, 'the host is still in the meeting');
    const chats = await c.call('GET', `/meeting/rooms/${code}/chats`, { as: 'host' });
    assert.deepEqual(chats.body.data.list, []);

    // The same endpoint with another body: a join's key reused for a leave and a chat.
    assert.equal((await inRoom('join', {}, 'guest', 'j1')).status, 200);
    reused(await inRoom('leave', {}, 'guest', 'j1'));
    const chat = await inRoom('chats', { content: 'one' }, 'guest', 'c1');
    assert.equal(chat.status, 201);
    reused(await inRoom('chats', { content: 'two' }, 'guest', 'c1'));
    const again = await inRoom('chats', { content: 'one' }, 'guest', 'c1');
    assert.deepEqual(again.body.data, chat.body.data);
    const after = await c.call('GET', `/meeting/rooms/${code}`, { as: 'guest' });
    assert.equal(after.body.data.online_count, 2);
    const lines = await c.call('GET', `/meeting/rooms/${code}/chats`, { as: 'guest' });
    assert.deepEqual(
      lines.body.data.list.map((m: { content: string }) => m.content),
      ['one'],
    );
    await c.call('POST', `/meeting/rooms/${code}/end`, { as: 'host', body: {} });
  });

  it('voice rooms: mic/up under a join’s request id takes no seat; a seat change under a used id is refused', async () => {
    const created = await c.call('POST', '/voice/rooms', {
      as: 'host',
      body: { title: 'reuse', seat_count: 2 },
      headers: key('v-create'),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const roomId = created.body.data.room_id as string;
    const voice = (path: string, body: object, k: string, as = 'fan') =>
      c.call('POST', `/voice/rooms/${roomId}/${path}`, { as, body, headers: key(k) });
    const seats = async () => {
      const room = await c.call('GET', `/voice/rooms/${roomId}`, { as: 'host' });
      return room.body.data.seats.map((s: { user_id: number | null }) => s.user_id);
    };

    assert.equal((await voice('join', {}, 'v-join')).status, 200);
    reused(await voice('mic/up', { seat_index: 0 }, 'v-join'));
    assert.deepEqual(await seats(), [null, null]);

    const up = await voice('mic/up', { seat_index: 0 }, 'v-up');
    assert.equal(up.status, 200, JSON.stringify(up.body));
    reused(await voice('mic/up', { seat_index: 1 }, 'v-up'));
    assert.deepEqual(await seats(), [c.ids.fan, null]);
    const retried = await voice('mic/up', { seat_index: 0 }, 'v-up');
    assert.equal(retried.status, 200);
    assert.equal(retried.body.data.duplicate, true);
    reused(
      await c.call('POST', '/voice/rooms', {
        as: 'host',
        body: { title: 'reuse', seat_count: 3 },
        headers: key('v-create'),
      }),
    );
  });
});
