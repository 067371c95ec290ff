/**
 * Meeting invites over REST (meeting-api.md §9 邀请用户, §10 兑换邀请链接) on a node's HTTP
 * app (embedded SQLite + in-memory KeyValue), as a client sees them: the invitee's
 * notification list, the inviter's answer (never a token), the redeem answer, the token's
 * lifetime (the KeyValue store's clock is moved ahead), retries by request id, bad input.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';
import { Redis } from 'ioredis';
import { RedisKeyValue } from '../../adapters/redis/redis-key-value.js';
import {
  clusterSkipReason,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import { meetingClient } from '../api/testing/meeting-client.js';
import { MemoryKeyValue } from '../../adapters/memory/memory-key-value.js';
import type { KeyValue } from '../../shared/key-value.js';
import { CLAIM_MS } from '../api/invites.js';

const HEX32 = /[0-9a-f]{32}/;

describe('meeting invites REST', () => {
  let app: TestHttpApp;
  /** Added to real time by the KeyValue store's clock. */
  let kvAheadMs = 0;
  const c = meetingClient(() => app.http);
  const { call, ids } = c;

  before(async () => {
    app = await startTestHttpApp({}, { kvClock: { nowMs: () => Date.now() + kvAheadMs } });
    await c.users(['host', 'member', 'guest', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'x1']);
    // The inviter's card shows their nickname and avatar.
    const creds = { username: 'carded_user', password: 'secret123' };
    const reg = await app.http.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { ...creds, nickname: '爱丽丝', avatar: 'https://cdn.example/a.png' },
    });
    assert.equal(reg.statusCode, 201, reg.body);
    const login = await app.http.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: creds,
    });
    const data = login.json<{ data: { access_token: string; user: { id: number } } }>().data;
    carded = { authorization: `Bearer ${data.access_token}` };
    ids.carded = data.user.id;
  });
  /** The inviter with a nickname and an avatar (its authorization header). */
  let carded: Record<string, string> = {};
  after(async () => {
    await app?.close();
  });

  const meetings: { code: string; host: string }[] = [];
  /** `as` a test user's name, or 'carded' (the user with a nickname and an avatar). */
  const who = (as: string) => (as === 'carded' ? { headers: carded } : { as });
  const create = async (as: string, body: Record<string, unknown> = {}) => {
    const r = await call('POST', '/meeting/rooms', {
      ...who(as),
      body: { title: '周会', ...body },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const code = r.body.data.room.room_code as string;
    meetings.push({ code, host: as });
    return code;
  };
  const endAll = async () => {
    for (const { code, host } of meetings.splice(0)) {
      await call('POST', `/meeting/rooms/${code}/end`, { ...who(host), body: {} });
    }
  };
  // Every test's users start outside any meeting, also after a failed test.
  afterEach(() => endAll());
  const invite = (as: string, code: string, body: unknown) =>
    call('POST', `/meeting/rooms/${code}/invite`, { ...who(as), body });
  const redeem = (as: string, token: string) =>
    call('POST', `/meeting/invite-tokens/${token}/redeem`, { as, body: {} });

  const invitesOf = async (as: string): Promise<any[]> => {
    const r = await call('GET', '/notifications?limit=50', { as });
    assert.equal(r.status, 200, JSON.stringify(r.body));

    return (r.body.data.list as any[]).filter((n) => n.type === 'meeting_invite');
  };
  const fail = (r: { status: number; body: { code: number; message: string } }) => [
    r.status,
    r.body.code,
    r.body.message,
  ];

  it('invites: one meeting_invite per invitee with exactly the seed extra; no token in the answer', async () => {
    const code = await create('carded', { password: '1234' });
    const joined = await call('POST', `/meeting/rooms/${code}/join`, {
      as: 'member',
      body: { password: '1234' },
    });
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    const before = (await invitesOf('a1')).length;
    const t0 = Math.floor(Date.now() / 1000);
    // a1 twice (counted once), a2, and the member already in the meeting (skipped).
    const r = await invite('carded', code, {
      invitee_ids: [ids.a1, ids.a2, ids.a1, ids.member],
    });
    const t1 = Math.ceil(Date.now() / 1000);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.data, { pushed: 2, skipped: 1 });
    const raw = JSON.stringify(r.body);
    assert.ok(!HEX32.test(raw), `no token in the answer: ${raw}`);
    assert.ok(!raw.includes('token'), raw);

    const tokens: string[] = [];
    for (const who of ['a1', 'a2']) {
      const list = await invitesOf(who);
      assert.equal(list.length, (who === 'a1' ? before : 0) + 1, `${who}: one invite`);
      const { extra, title, content } = list[0];
      assert.deepEqual(Object.keys(extra).sort(), [
        'expired_at',
        'has_password',
        'invite_token',
        'inviter_avatar',
        'inviter_id',
        'inviter_name',
        'room_code',
        'room_title',
      ]);
      assert.equal(typeof title, 'string');
      assert.equal(typeof content, 'string');
      assert.deepEqual(
        {
          room_code: extra.room_code,
          room_title: extra.room_title,
          has_password: extra.has_password,
          inviter_id: extra.inviter_id,
          inviter_name: extra.inviter_name,
          inviter_avatar: extra.inviter_avatar,
        },
        {
          room_code: code,
          room_title: '周会',
          has_password: true,
          inviter_id: ids.carded,
          inviter_name: '爱丽丝',
          inviter_avatar: 'https://cdn.example/a.png',
        },
      );
      assert.match(extra.invite_token, /^[0-9a-f]{32}$/);
      assert.ok(Number.isInteger(extra.expired_at));
      assert.ok(
        extra.expired_at >= t0 + 599 && extra.expired_at <= t1 + 600,
        `expired_at ${extra.expired_at} ≈ now + 600 s`,
      );
      assert.ok(!raw.includes(extra.invite_token));
      tokens.push(extra.invite_token);
    }
    assert.notEqual(tokens[0], tokens[1], 'each invitee its own token');
    // The token's record is the seed's value, exactly.
    assert.deepEqual(JSON.parse((await app.kv.get(`meeting:invite:default:${tokens[0]}`))!), {
      room_code: code,
      inviter_id: ids.carded,
      invitee_id: ids.a1,
      has_password: true,
    });
    assert.deepEqual(await invitesOf('member'), [], 'the active member got nothing');
    await endAll();
  });

  it('only an active participant invites: 你当前未在会议中; an unknown meeting: 会议不存在', async () => {
    const code = await create('host');
    const outsider = await invite('guest', code, { invitee_ids: [ids.a3] });
    assert.deepEqual(fail(outsider), [400, 400, '你当前未在会议中']);
    const missing = await invite('host', '000-000-001', { invitee_ids: [ids.a3] });
    assert.deepEqual(fail(missing), [404, 404, '会议不存在']);
    await endAll();
    const ended = await invite('host', code, { invitee_ids: [ids.a3] });
    assert.deepEqual(fail(ended), [400, 400, '你当前未在会议中']);
    assert.deepEqual(await invitesOf('a3'), [], 'no refused invite sent anything');
  });

  it('invitee_ids must be 1-50 JSON integers ≥ 1; anything else is 400 and sends nothing', async () => {
    const code = await create('host');
    const names = Array.from({ length: 50 }, (_, i) => `f${i}`);
    await c.users(names);
    const fifty = names.map((n) => ids[n]!);
    for (const body of [
      { invitee_ids: [...fifty, 900_050] },
      { invitee_ids: [String(ids.a4)] },
      { invitee_ids: [ids.a4, '5'] },
      { invitee_ids: [] },
      { invitee_ids: [ids.a4! + 0.5] },
      { invitee_ids: [0] },
      { invitee_ids: [-1] },
      { invitee_ids: [null] },
      { invitee_ids: [true] },
      { invitee_ids: [[ids.a4]] },
      { invitee_ids: ids.a4 },
      {},
      { invitee_ids: [ids.a4], extra: 1 },
      { invitee_ids: [ids.a4], token: 'x' },
    ]) {
      const r = await invite('host', code, body);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
    }
    assert.deepEqual(await invitesOf('a4'), []);
    // 50 is the bound, not past it.
    const ok = await invite('host', code, { invitee_ids: fifty });
    assert.deepEqual(ok.body.data, { pushed: 50, skipped: 0 });
    await endAll();
  });

  it('redeem answers the seed fields, again within 60 s, then 邀请链接已失效', async () => {
    const code = await create('host');
    await invite('host', code, { invitee_ids: [ids.a5, ids.a6] });
    const [t5] = (await invitesOf('a5')).map((n) => n.extra.invite_token as string);
    const [t6] = (await invitesOf('a6')).map((n) => n.extra.invite_token as string);
    const want = { room_code: code, inviter_id: ids.host, has_password: false };
    const first = await redeem('a5', t5!);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body.data, want);
    // Any logged-in user may redeem (a page refresh, a forwarded link): the same answer.
    assert.deepEqual((await redeem('a5', t5!)).body.data, want);
    assert.deepEqual((await redeem('guest', t5!)).body.data, want);
    try {
      kvAheadMs = 59_000;
      assert.deepEqual((await redeem('a5', t5!)).body.data, want, 'still within 60 s');
      kvAheadMs = 61_000;
      assert.deepEqual(fail(await redeem('a5', t5!)), [400, 400, '邀请链接已失效']);
      // The token never redeemed keeps its 600 s: only a redeem shortens a token's life.
      assert.deepEqual((await redeem('a6', t6!)).body.data, want);
      kvAheadMs = 120_000;
      assert.deepEqual((await redeem('a6', t6!)).body.data, want, 'its first redeem was at 61 s');
      kvAheadMs = 122_000;
      assert.deepEqual(fail(await redeem('a6', t6!)), [400, 400, '邀请链接已失效']);
    } finally {
      kvAheadMs = 0;
    }
    await endAll();
  });

  it('an unredeemed token expires after 600 s; a deleted key is 邀请链接已失效', async () => {
    const code = await create('host');
    await invite('host', code, { invitee_ids: [ids.a7, ids.x1] });
    const [t7] = (await invitesOf('a7')).map((n) => n.extra.invite_token as string);
    const [tx] = (await invitesOf('x1')).map((n) => n.extra.invite_token as string);
    try {
      kvAheadMs = 599_000;
      assert.deepEqual((await redeem('x1', tx!)).body.data.room_code, code);
      kvAheadMs = 601_000;
      assert.deepEqual(fail(await redeem('a7', t7!)), [400, 400, '邀请链接已失效']);
    } finally {
      kvAheadMs = 0;
    }
    await app.kv.del(`meeting:invite:default:${tx!}`);
    assert.deepEqual(fail(await redeem('x1', tx!)), [400, 400, '邀请链接已失效']);
    await endAll();
  });

  it('a malformed or unknown token is 邀请链接已失效; without a login it is 401', async () => {
    const unknown = '0123456789abcdef0123456789abcdef';
    for (const token of [
      unknown,
      unknown.toUpperCase(),
      unknown.slice(1),
      `${unknown}0`,
      'g'.repeat(32),
      '%20'.repeat(5),
      `${unknown.slice(2)}%41%41`,
    ]) {
      const r = await redeem('guest', token);
      assert.deepEqual(fail(r), [400, 400, '邀请链接已失效'], token);
    }
    const anonymous = await call('POST', `/meeting/invite-tokens/${unknown}/redeem`, { body: {} });
    assert.equal(anonymous.status, 401);
    const withBody = await call('POST', `/meeting/invite-tokens/${unknown}/redeem`, {
      as: 'guest',
      body: { token: unknown },
    });
    assert.equal(withBody.status, 400, 'the body takes no fields');
  });

  it('a retry with the same request_id answers the first outcome and sends nothing more', async () => {
    const code = await create('host');
    const body = { request_id: 'invite-1', invitee_ids: [ids.a2] };
    const before = (await invitesOf('a2')).length;
    const first = await invite('host', code, body);
    assert.deepEqual(first.body.data, { pushed: 1, skipped: 0 });
    const again = await invite('host', code, body);
    assert.deepEqual([again.status, again.body.data], [200, { pushed: 1, skipped: 0 }]);
    // The Idempotency-Key header is the same request id.
    const viaHeader = await invite('host', code, { invitee_ids: [ids.a2] });
    assert.equal(viaHeader.status, 200);
    const h = { 'idempotency-key': 'invite-2' };
    await call('POST', `/meeting/rooms/${code}/invite`, {
      as: 'host',
      body: { invitee_ids: [ids.a2] },
      headers: h,
    });
    await call('POST', `/meeting/rooms/${code}/invite`, {
      as: 'host',
      body: { invitee_ids: [ids.a2] },
      headers: h,
    });
    assert.equal((await invitesOf('a2')).length, before + 3, 'one per distinct request');
    // The same id with other invitees is another operation.
    const other = await invite('host', code, { request_id: 'invite-1', invitee_ids: [ids.a3] });
    assert.equal(other.status, 409, JSON.stringify(other.body));
    assert.deepEqual(await invitesOf('a3'), []);
    await endAll();
  });

  it('a refused invite retried after the caller joined still answers the refusal', async () => {
    const code = await create('host');
    const body = { request_id: 'late-1', invitee_ids: [ids.a4] };
    assert.deepEqual(fail(await invite('guest', code, body)), [400, 400, '你当前未在会议中']);
    await call('POST', `/meeting/rooms/${code}/join`, { as: 'guest', body: {} });
    assert.deepEqual(fail(await invite('guest', code, body)), [400, 400, '你当前未在会议中']);
    assert.deepEqual(await invitesOf('a4'), []);
    // Another caller's equal request id is another request.
    const host = await invite('host', code, body);
    assert.deepEqual(host.body.data, { pushed: 1, skipped: 0 });
    await call('POST', `/meeting/rooms/${code}/leave`, { as: 'guest', body: {} });
    await endAll();
  });
});

// Racing copies interleave only on a store with real round trips: Redis, as a cluster has.
const skip = await clusterSkipReason();
describe('meeting invites REST on Redis', { skip }, () => {
  let app: TestHttpApp;
  const keyPrefix = testKeyPrefix();
  const redis = new Redis(testRedisUrl(), { lazyConnect: true });
  const c = meetingClient(() => app.http);
  const { call, ids } = c;
  const who = (as: string) => ({ as });

  before(async () => {
    app = await startTestHttpApp({}, { kv: new RedisKeyValue({ redis, keyPrefix }) });
    await c.users(['host', 'a6']);
  });
  after(async () => {
    await app?.close();
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix);
    redis.disconnect();
  });
  const create = async (as: string) => {
    const r = await call('POST', '/meeting/rooms', { as, body: { title: '周会' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.data.room.room_code as string;
  };
  const invite = (as: string, code: string, body: unknown) =>
    call('POST', `/meeting/rooms/${code}/invite`, { ...who(as), body });

  const invitesOf = async (as: string): Promise<any[]> => {
    const r = await call('GET', '/notifications?limit=50', { as });

    return (r.body.data.list as any[]).filter((n) => n.type === 'meeting_invite');
  };
  const endAll = () => Promise.resolve();

  it('two copies of one invite at once send one notification', async () => {
    const code = await create('host');
    const before = (await invitesOf('a6')).length;
    const body = { request_id: 'race-1', invitee_ids: [ids.a6] };
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => invite('host', code, body)));
    for (const a of answers) {
      // The loser answers BUSY (503, retry) while the first copy is in flight, or its answer.
      if (a.status === 200) assert.deepEqual(a.body.data, { pushed: 1, skipped: 0 });
      else assert.equal(a.status, 503, JSON.stringify(a.body));
    }
    assert.ok(answers.some((a) => a.status === 200));
    const retried = await invite('host', code, body);
    assert.deepEqual(retried.body.data, { pushed: 1, skipped: 0 });
    assert.equal((await invitesOf('a6')).length, before + 1);
    await endAll();
  });
});

/**
 * A KeyValue store whose writes a test can fail or hold: the node running an invite dies, or
 * pauses, at that step.
 */
class FaultyKeyValue implements KeyValue {
  onSet: ((key: string, value: string) => Promise<void> | void) | null = null;
  /** Runs after a read, before its caller sees the value. */
  onGet: ((key: string, value: string | null) => Promise<void> | void) | null = null;
  constructor(private readonly inner: KeyValue) {}
  async get(key: string) {
    const value = await this.inner.get(key);
    await this.onGet?.(key, value);
    return value;
  }
  async set(key: string, value: string, ttlMs: number) {
    await this.onSet?.(key, value);
    return this.inner.set(key, value, ttlMs);
  }
  del(key: string) {
    return this.inner.del(key);
  }
  incr(key: string, ttlMs: number) {
    return this.inner.incr(key, ttlMs);
  }
  setIfAbsent(key: string, value: string, ttlMs: number) {
    return this.inner.setIfAbsent(key, value, ttlMs);
  }
  getCappingTtl(key: string, maxTtlMs: number) {
    return this.inner.getCappingTtl(key, maxTtlMs);
  }
}

describe('meeting invites: a node dying or pausing mid-invite', () => {
  let app: TestHttpApp;
  let kvAheadMs = 0;
  const kv = new FaultyKeyValue(
    new MemoryKeyValue({ clock: { nowMs: () => Date.now() + kvAheadMs } }),
  );
  /** `notification.new` frames by recipient id. */
  const frames = new Map<string, number>();
  const c = meetingClient(() => app.http);
  const { call, ids } = c;

  before(async () => {
    app = await startTestHttpApp(
      {},
      {
        kv,
        push: {
          toUser: (_app, userId, event) => {
            if (event === 'notification.new') frames.set(userId, (frames.get(userId) ?? 0) + 1);
          },
        },
      },
    );
    await c.users(['host', 'member', 'b1', 'b2', 'b3']);
  });
  after(async () => {
    await app?.close();
  });
  /** Meetings to end after each test, so every test's users start outside any meeting. */
  const open: string[] = [];
  afterEach(async () => {
    kv.onSet = null;
    kv.onGet = null;
    kvAheadMs = 0;
    for (const code of open.splice(0)) {
      await call('POST', `/meeting/rooms/${code}/end`, { as: 'host', body: {} });
    }
  });

  const create = async (as: string) => {
    const r = await call('POST', '/meeting/rooms', { as, body: { title: '周会' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const code = r.body.data.room.room_code as string;
    open.push(code);
    return code;
  };
  const join = async (as: string, code: string) => {
    const r = await call('POST', `/meeting/rooms/${code}/join`, { as, body: {} });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };
  const leave = async (as: string, code: string) => {
    const r = await call('POST', `/meeting/rooms/${code}/leave`, { as, body: {} });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };
  const invite = (as: string, code: string, body: unknown) =>
    call('POST', `/meeting/rooms/${code}/invite`, { as, body });
  const invitesOf = async (as: string): Promise<any[]> => {
    const r = await call('GET', '/notifications?limit=50', { as });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return (r.body.data.list as any[]).filter((n) => n.type === 'meeting_invite');
  };
  const countsOf = async (names: readonly string[]) =>
    Object.fromEntries(
      await Promise.all(names.map(async (n) => [n, (await invitesOf(n)).length] as const)),
    );
  const framesOf = (names: readonly string[]) =>
    Object.fromEntries(names.map((n) => [n, frames.get(String(ids[n])) ?? 0]));

  it('dead after the notifications committed, before the outcome was recorded: a retry sends nothing and answers that outcome', async () => {
    const code = await create('host');
    await join('member', code);
    const body = { request_id: 'crash-1', invitee_ids: [ids.b1, ids.b2, ids.member] };
    // The record of the outcome never happens: the node died just after the commit.
    kv.onSet = (key, value) => {
      if (key.startsWith('meeting:invite-req:') && !value.startsWith('pending')) {
        throw new Error('node died');
      }
    };
    const first = await invite('host', code, body);
    kv.onSet = null;
    assert.ok(first.status >= 500, JSON.stringify(first.body));
    assert.deepEqual(await countsOf(['b1', 'b2', 'member']), { b1: 1, b2: 1, member: 0 });
    const tokens = (await invitesOf('b1')).map((n) => n.extra.invite_token as string);

    // The state moves on (deciding again would invite the member too), and the dead node's
    // claim on the request id expires.
    await leave('member', code);
    kvAheadMs = CLAIM_MS + 1_000;
    const retry = await invite('host', code, body);
    assert.deepEqual([retry.status, retry.body.data], [200, { pushed: 2, skipped: 1 }]);
    assert.deepEqual(await countsOf(['b1', 'b2', 'member']), { b1: 1, b2: 1, member: 0 });
    assert.deepEqual(framesOf(['b1', 'b2', 'member']), { b1: 1, b2: 1, member: 0 }, 'no new push');
    assert.deepEqual(
      (await invitesOf('b1')).map((n) => n.extra.invite_token),
      tokens,
      'the first token stands',
    );
    const again = await invite('host', code, body);
    assert.deepEqual([again.status, again.body.data], [200, { pushed: 2, skipped: 1 }]);
    // The same id with other invitees is another operation, as before the crash.
    const reused = await invite('host', code, { request_id: 'crash-1', invitee_ids: [ids.b3] });
    assert.equal(reused.status, 409, JSON.stringify(reused.body));

    // Another request id is another invite.
    const next = await invite('host', code, { ...body, request_id: 'crash-2' });
    assert.deepEqual([next.status, next.body.data], [200, { pushed: 3, skipped: 0 }]);
    assert.deepEqual(await countsOf(['b1', 'b2', 'member']), { b1: 2, b2: 2, member: 1 });
    assert.deepEqual(framesOf(['b1', 'b2', 'member']), { b1: 2, b2: 2, member: 1 });
  });

  it('the recorded outcome lost (KeyValue store restarted): the committed notifications are still the answer', async () => {
    const code = await create('host');
    const body = { request_id: 'lost-1', invitee_ids: [ids.b3] };
    const before = await countsOf(['b3']);
    const first = await invite('host', code, body);
    assert.deepEqual(first.body.data, { pushed: 1, skipped: 0 });
    await kv.del(`meeting:invite-req:default:${code}:${ids.host}:lost-1`);
    const retry = await invite('host', code, body);
    assert.deepEqual([retry.status, retry.body.data], [200, { pushed: 1, skipped: 0 }]);
    assert.deepEqual(await countsOf(['b3']), { b3: before.b3! + 1 });
  });

  it('a copy paused past its claim while a retry is refused: the late copy sends nothing and answers the refusal', async () => {
    const code = await create('host');
    await join('member', code);
    const body = { request_id: 'pause-1', invitee_ids: [ids.b3] };
    const before = await countsOf(['b3']);
    let reached!: () => void;
    let release!: () => void;
    const paused = new Promise<void>((r) => (reached = r));
    const held = new Promise<void>((r) => (release = r));
    // The first copy pauses after deciding, while it writes the invitee's token.
    kv.onSet = async (key) => {
      if (!key.startsWith('meeting:invite:')) return;
      kv.onSet = null;
      reached();
      await held;
    };
    const late = invite('member', code, body);
    await paused;
    // Meanwhile its claim expires, the inviter leaves, and a retry is refused.
    kvAheadMs = CLAIM_MS + 1_000;
    await leave('member', code);
    const retry = await invite('member', code, body);
    assert.deepEqual(
      [retry.status, retry.body.message],
      [400, '你当前未在会议中'],
      JSON.stringify(retry.body),
    );
    release();
    const answer = await late;
    assert.deepEqual(
      [answer.status, answer.body.message],
      [400, '你当前未在会议中'],
      `the first recorded outcome: ${JSON.stringify(answer.body)}`,
    );
    assert.deepEqual(await countsOf(['b3']), before, 'the late copy sent nothing');
  });

  it('a copy paused between its claim check and its commit: the retry commits, the late copy writes nothing and answers the same', async () => {
    const code = await create('host');
    const body = { request_id: 'pause-2', invitee_ids: [ids.b1, ids.b2] };
    const before = await countsOf(['b1', 'b2']);
    const lateTokens: string[] = [];
    let reached!: () => void;
    let release!: () => void;
    const paused = new Promise<void>((r) => (reached = r));
    const held = new Promise<void>((r) => (release = r));
    kv.onSet = (key) => {
      if (key.startsWith('meeting:invite:')) lateTokens.push(key);
    };
    // The first copy's claim check passes, then the copy pauses before it commits.
    kv.onGet = async (key, value) => {
      if (!key.startsWith('meeting:invite-req:') || !value?.startsWith('pending')) return;
      kv.onGet = null;
      kv.onSet = null;
      reached();
      await held;
    };
    const late = invite('host', code, body);
    await paused;
    kvAheadMs = CLAIM_MS + 1_000;
    const retry = await invite('host', code, body);
    assert.deepEqual([retry.status, retry.body.data], [200, { pushed: 2, skipped: 0 }]);
    release();
    const answer = await late;
    assert.deepEqual([answer.status, answer.body.data], [200, { pushed: 2, skipped: 0 }]);
    assert.deepEqual(await countsOf(['b1', 'b2']), { b1: before.b1! + 1, b2: before.b2! + 1 });
    assert.equal(lateTokens.length, 2);
    for (const key of lateTokens) {
      assert.equal(await kv.get(key), null, "the late copy's unsent tokens are gone");
    }
  });
});
