/**
 * The OpenAPI document against the answers, as a client team checks it: a scenario drives
 * the accounts, notification, voice-room and meeting operations (successes and refusals) on a
 * real app, and every answer is validated with ajv against the schema the served document
 * gives for that operation and status. No answer may miss its schema, no status may be
 * one the document does not list, and no refusal's `reason` one its answer does not list.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';

const ADMIN = 'admin-token-for-conformance';
type Schema = Record<string, unknown>;
type Document = {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
      }
    >
  >;
  components: Record<string, unknown>;
};

describe('OpenAPI answers conform to the document (ajv)', () => {
  let app: TestHttpApp;
  let doc: Document;
  // OpenAPI 3.1's schemas are JSON Schema 2020-12: read as they are, nothing converted.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const checked = new Set<string>();
  const problems: string[] = [];

  /** The document's operation for a concrete request path. */
  const operationOf = (method: string, path: string) => {
    const bare = path.split('?')[0]!;
    for (const [template, item] of Object.entries(doc.paths)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (pattern.test(bare)) {
        const op = item[method.toLowerCase()];
        if (op) return op;
      }
    }
    return undefined;
  };

  /** Sends a request and checks its answer against the document; returns the body. */
  const call = async (
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    options: { token?: string; admin?: boolean; body?: unknown } = {},
  ) => {
    const res = await app.http.inject({
      method,
      url: path,
      headers: {
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        ...(options.admin ? { 'x-admin-token': ADMIN } : {}),
      },
      ...(options.body === undefined ? {} : { payload: options.body as object }),
    });
    const op = operationOf(method, path);
    const label = `${method} ${path} → ${res.statusCode}`;
    if (!op) {
      problems.push(`${label}: no operation in the document`);
      return res.json();
    }
    const response = op.responses[String(res.statusCode)];
    const schema = response?.content?.['application/json']?.schema;
    if (!schema) {
      problems.push(`${label}: status not documented for ${op.operationId}`);
      return res.json();
    }
    const validate = ajv.compile({ ...schema, components: doc.components });
    if (!validate(res.json())) {
      problems.push(`${label}: ${ajv.errorsText(validate.errors)} in ${res.body.slice(0, 300)}`);
    }
    checked.add(`${op.operationId} ${res.statusCode}`);
    return res.json();
  };

  const userToken = async (username: string) => {
    const creds = { username, password: 'secret123' };
    await call('POST', '/api/v1/auth/register', { body: creds });
    const login = await call('POST', '/api/v1/auth/login', { body: creds });
    return { token: login.data.access_token as string, id: login.data.user.id as number };
  };

  before(async () => {
    app = await startTestHttpApp({ ROOMS_ADMIN_TOKEN: ADMIN });
    doc = (await app.http.inject({ url: '/docs/json' })).json();
  });
  after(async () => {
    await app?.close();
  });

  it('accounts, voice rooms, meetings and notifications answer as documented', async () => {
    const alice = await userToken('conf_alice');
    const bob = await userToken('conf_bob');
    await call('GET', '/api/v1/users/me', { token: alice.token });
    await call('GET', `/api/v1/users?ids=${alice.id},${bob.id}`, { token: alice.token });
    await call('POST', '/api/v1/auth/login', { body: { username: 'conf_alice', password: 'x' } });

    // Voice room: create, join, seats, moderation, gifts, reads, close.
    await call('PUT', '/api/v1/admin/gifts/rose', {
      admin: true,
      body: { name: 'Rose', price: 5 },
    });
    await call('POST', '/api/v1/admin/wallets/topup', {
      admin: true,
      body: { user_id: alice.id, amount: 100, request_id: 'conf-top' },
    });
    const room = await call('POST', '/api/v1/voice/rooms', {
      token: alice.token,
      body: { title: 'Conformance', seat_count: 4 },
    });
    const r = `/api/v1/voice/rooms/${room.data.room_id as string}`;
    await call('POST', `${r}/join`, { token: alice.token });
    await call('POST', `${r}/join`, { token: bob.token });
    await call('POST', `${r}/heartbeat`, { token: bob.token });
    const up = await call('POST', `${r}/mic/up`, { token: alice.token, body: { seat_index: 0 } });
    await call('POST', `${r}/mic/confirm`, {
      token: alice.token,
      body: { mic_session_id: up.data.mic_session_id },
    });
    await call('POST', `${r}/mic/change`, { token: alice.token, body: { seat_index: 1 } });
    await call('POST', `${r}/mic/up`, { token: bob.token, body: { seat_index: 1 } }); // taken
    await call('POST', `${r}/mic/down`, { token: alice.token, body: {} });
    await call('POST', `${r}/seats/lock`, {
      token: alice.token,
      body: { seat_index: 3, locked: true },
    });
    await call('POST', `${r}/admins`, {
      token: alice.token,
      body: { user_id: bob.id, is_admin: true },
    });
    await call('POST', `${r}/gifts`, {
      token: alice.token,
      body: { receiver_user_ids: [bob.id], gift_id: 'rose', count: 2 },
    });
    await call('GET', r, { token: bob.token });
    // Two members, one a page: a page with a next one, the last page, a refused limit.
    const first = await call('GET', `${r}/members?limit=1`, { token: bob.token });
    await call('GET', `${r}/members?after=${first.data.next_after as number}`, {
      token: bob.token,
    });
    await call('GET', `${r}/members?limit=0`, { token: bob.token });
    await call('GET', '/api/v1/voice/rooms/no_such_room/members', { token: bob.token });
    await call('GET', '/api/v1/voice/rooms?limit=5', { token: bob.token });
    await call('GET', '/api/v1/voice/wallet', { token: alice.token });
    await call('GET', '/api/v1/voice/gifts', { token: alice.token });
    await call('POST', `${r}/kick`, { token: alice.token, body: { user_id: bob.id } });
    await call('POST', `${r}/unban`, { token: alice.token, body: { user_id: bob.id } });
    await call('POST', `${r}/leave`, { token: alice.token });
    await call('POST', `${r}/close`, { token: alice.token });
    await call('GET', '/api/v1/voice/rooms/no_such_room', { token: alice.token });

    // Meeting: create, join, chat, invite, host moves, leave, end; a reused id and refusals.
    const created = await call('POST', '/api/v1/meeting/rooms', {
      token: alice.token,
      body: { title: 'Conformance', request_id: 'conf-m1' },
    });
    const code = created.data.room.room_code as string;
    const m = `/api/v1/meeting/rooms/${code}`;
    await call('POST', '/api/v1/meeting/rooms', {
      token: alice.token,
      body: { title: 'Other', request_id: 'conf-m1' },
    });
    await call('POST', `${m}/join`, { token: bob.token, body: {} });
    await call('GET', m, { token: bob.token });
    await call('GET', '/api/v1/meeting/rooms/mine', { token: alice.token });
    await call('POST', `${m}/chats`, { token: bob.token, body: { content: 'hello' } });
    await call('GET', `${m}/chats?limit=10`, { token: alice.token });
    const carol = await userToken('conf_carol');
    await call('POST', `${m}/invite`, { token: alice.token, body: { invitee_ids: [carol.id] } });
    const inbox = await call('GET', '/api/v1/notifications', { token: carol.token });
    await call('GET', '/api/v1/notifications/unread-count', { token: carol.token });
    const invite = inbox.data.list[0];
    await call(
      'POST',
      `/api/v1/meeting/invite-tokens/${invite.extra.invite_token as string}/redeem`,
      {
        token: carol.token,
        body: {},
      },
    );
    await call('POST', `/api/v1/notifications/${invite.id as number}/read`, { token: carol.token });
    await call('POST', '/api/v1/notifications/read-all', { token: carol.token });
    await call('POST', `${m}/transfer-host`, {
      token: alice.token,
      body: { target_user_id: bob.id },
    });
    await call('POST', `${m}/kick`, { token: bob.token, body: { user_id: alice.id } });
    await call('POST', `${m}/kick`, { token: alice.token, body: { user_id: bob.id } }); // not host
    await call('POST', `${m}/leave`, { token: carol.token, body: {} }); // not in it
    await call('POST', `${m}/end`, { token: bob.token, body: {} });
    await call('GET', '/api/v1/meeting/rooms/000-000-000', { token: bob.token });

    assert.deepEqual(problems, []);
    // The scenario reached what it meant to: each kind's commands, queries and refusals.
    for (const expected of [
      'createRoom 201',
      'micUp 200',
      'micUp 400',
      'topUpWallet 200',
      'setRoomAdmin 200',
      'sendGift 200',
      'kickUser 200',
      'unbanUser 200',
      'getRoom 200',
      'getRoom 404',
      'listMembers 200',
      'listMembers 400',
      'listMembers 404',
      'createMeeting 201',
      'createMeeting 409',
      'joinMeeting 200',
      'getMeeting 200',
      'getMeeting 404',
      'sendChat 201',
      'listChats 200',
      'inviteMembers 200',
      'redeemInvite 200',
      'kickMember 403',
      'endMeeting 200',
      'listNotifications 200',
      'readNotification 200',
      'login 200',
      'login 401',
      'lookupUsers 200',
    ]) {
      assert.ok(
        checked.has(expected),
        `${expected} was checked (checked: ${[...checked].join(', ')})`,
      );
    }
  });
});
