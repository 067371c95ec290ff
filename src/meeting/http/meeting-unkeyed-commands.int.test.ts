/**
 * A meeting command sent without a request id (no body `request_id`, no `Idempotency-Key`)
 * is a new command each time: nothing can retry it, so no outcome of it is kept in
 * `room_request_outcomes`. The same goes for the WebSocket signalling's own notices (a
 * socket live, a node's sockets gone, a member's media state). A command with a key still
 * leaves exactly one outcome, and its retry is answered from it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SqlBackend } from '../../adapters/sql/database.js';
import { mediaSkipReason, waitFor } from '../../media-server/testing/harness.js';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';
import { meetingClient } from '../api/testing/meeting-client.js';

const outcomesOf = async (sql: SqlBackend, code: string) =>
  (
    await sql.db
      .selectFrom('room_request_outcomes')
      .select('request_id')
      .where('room_id', '=', code)
      .execute()
  ).map((r) => r.request_id);

const loggedTypes = async (sql: SqlBackend, code: string) =>
  (
    await sql.db
      .selectFrom('room_command_log')
      .select('command_type')
      .where('room_id', '=', code)
      .execute()
  ).map((r) => r.command_type);

describe('meeting commands without a request id (REST)', () => {
  let app: TestHttpApp;
  const c = meetingClient(() => app.http);

  before(async () => {
    app = await startTestHttpApp();
    await c.users(['host', 'guest', 'friend']);
  });
  after(() => app?.close());

  it('leave no outcome rows, while a keyed command leaves one that answers its retry', async () => {
    const created = await c.call('POST', '/meeting/rooms', { as: 'host', body: { title: '周会' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const code = created.body.data.room.room_code as string;
    const mine = await c.call('GET', '/meeting/rooms/mine', { as: 'host' });
    assert.deepEqual(
      mine.body.data.list.map((m: { room_code: string }) => m.room_code),
      [code],
      'one create, one meeting',
    );
    const inRoom = (path: string, as: string, body: object = {}, headers = {}) =>
      c.call('POST', `/meeting/rooms/${code}/${path}`, { as, body, headers });

    assert.equal((await inRoom('join', 'guest')).status, 200);
    assert.equal((await inRoom('chats', 'guest', { content: 'hello' })).status, 201);
    // Each invite without a key is a request of its own: both send.
    for (let i = 0; i < 2; i++) {
      const invited = await inRoom('invite', 'host', { invitee_ids: [c.ids.friend] });
      assert.equal(invited.status, 200, JSON.stringify(invited.body));
      assert.deepEqual(invited.body.data, { pushed: 1, skipped: 0 });
    }
    assert.equal((await inRoom('leave', 'guest')).status, 200);
    assert.equal((await inRoom('join', 'guest')).status, 200);
    assert.deepEqual(await outcomesOf(app.sql, code), []);

    const keyed = await inRoom('chats', 'guest', { content: 'once' }, { 'idempotency-key': 'c1' });
    assert.equal(keyed.status, 201);
    const retried = await inRoom(
      'chats',
      'guest',
      { content: 'once' },
      { 'idempotency-key': 'c1' },
    );
    assert.deepEqual(retried.body.data, keyed.body.data);
    assert.deepEqual(await outcomesOf(app.sql, code), [`${c.ids.guest}:c1`]);
    const lines = await c.call('GET', `/meeting/rooms/${code}/chats`, { as: 'host' });
    assert.deepEqual(
      lines.body.data.list.map((m: { content: string }) => m.content),
      ['once', 'hello'],
    );
    assert.equal((await inRoom('end', 'host')).status, 200);
    assert.deepEqual(await outcomesOf(app.sql, code), [`${c.ids.guest}:c1`]);
  });

  it('a keyed create is recorded once and its retry answers the same meeting', async () => {
    const create = () =>
      c.call('POST', '/meeting/rooms', {
        as: 'friend',
        body: { title: '复盘', request_id: 'create-1' },
      });
    const first = await create();
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const again = await create();
    assert.deepEqual(again.body.data, first.body.data);
    const code = first.body.data.room.room_code as string;
    assert.deepEqual(await outcomesOf(app.sql, code), [`${c.ids.friend}:create-1`]);
  });
});

describe('the WebSocket signalling’s notices', { skip: mediaSkipReason() }, () => {
  let started: MeetingNode | undefined;

  before(async () => {
    started = await startMeetingNode(['host', 'guest']);
  });
  after(async () => {
    await started?.close();
  });

  it('leave no outcome rows: socket live, state change, sockets gone', async () => {
    const { api, node } = started!;
    const created = await api.call('POST', '/meeting/rooms', {
      as: 'host',
      body: { title: '站会' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const code = created.body.data.room.room_code as string;
    const joined = await api.call('POST', `/meeting/rooms/${code}/join`, { as: 'guest', body: {} });
    assert.equal(joined.status, 200);

    const host = await started!.socket('host');
    assert.equal((await host.request('meeting.room.join', { room_code: code })).code, 0);
    const guest = await started!.socket('guest');
    assert.equal((await guest.request('meeting.room.join', { room_code: code })).code, 0);
    const muted = await host.request('meeting.member.state.changed', {
      room_code: code,
      target_user_id: api.ids.guest,
      audio_enabled: false,
    });
    assert.equal(muted.code, 0, muted.message);
    guest.close();
    await waitFor(async () => {
      const types = await loggedTypes(node.sql, code);
      return types.includes('MarkSocketsGone') ? types : undefined;
    }, 'the guest’s sockets gone, committed');
    const types = await loggedTypes(node.sql, code);
    for (const type of ['MarkSocketLive', 'ChangeMemberState']) {
      assert.ok(types.includes(type), `${type} committed: ${types.join(',')}`);
    }
    assert.deepEqual(await outcomesOf(node.sql, code), []);
  });
});
