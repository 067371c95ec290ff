/**
 * The meeting password lockout under parallel guesses: 30 joins with different passwords sent
 * at once, the right one last. Each guess takes its place among the 5 a (user, meeting) may
 * have checked before bcrypt runs, so at most 5 are ever checked (counted on the real
 * hasher) and the right one, arriving once they are used up, is locked out. On one node
 * (embedded SQLite, in-memory counters) and on two nodes (MariaDB + Redis), the guesses
 * spread over both.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { BcryptPasswordHasher } from '../../accounts/password.js';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';
import { loadConfig } from '../../main/config.js';
import { startNode, type RoomsNode } from '../../main/node.js';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import { meetingClient, type MeetingClient } from '../api/testing/meeting-client.js';

const RIGHT = 'open-sesame';
const GUESSES = 30;

/** Counts bcrypt checks on every hasher of this process (both nodes run here). */
function countVerifies(): { readonly count: () => number; restore(): void } {
  const proto = BcryptPasswordHasher.prototype;
  const original = Object.getOwnPropertyDescriptor(proto, 'verify')!;
  const verify = original.value as BcryptPasswordHasher['verify'];
  let calls = 0;
  proto.verify = function (this: BcryptPasswordHasher, pw: string, hash: string) {
    calls++;
    return verify.call(this, pw, hash);
  };
  return {
    count: () => calls,
    restore: () => {
      Object.defineProperty(proto, 'verify', original);
    },
  };
}

/** 29 wrong passwords and the right one last, all at once, spread over `via`. */
async function guess(
  c: MeetingClient,
  code: string,
  via: readonly (FastifyInstance | undefined)[],
) {
  const passwords = Array.from({ length: GUESSES }, (_, i) =>
    i === GUESSES - 1 ? RIGHT : `wrong-${i}`,
  );
  const spy = countVerifies();
  try {
    const replies = await Promise.all(
      passwords.map((password, i) =>
        c.call('POST', `/meeting/rooms/${code}/join`, {
          as: 'thief',
          body: { password },
          ...(via[i % via.length] ? { via: via[i % via.length]! } : {}),
        }),
      ),
    );
    return { replies, passwords, checked: spy.count() };
  } finally {
    spy.restore();
  }
}

function judge(result: Awaited<ReturnType<typeof guess>>) {
  const { replies, checked } = result;
  const messages = replies.map((r) => r.body.message);
  assert.ok(checked <= 5, `${checked} passwords were checked with bcrypt`);
  const wrong = messages.filter((m) => m === '会议密码错误').length;
  const locked = messages.filter((m) => m === '密码尝试过多，请稍后再试').length;
  const joined = replies.filter((r) => r.status === 200).length;
  assert.equal(wrong + locked + joined, GUESSES, messages.join(' | '));
  assert.ok(wrong <= 5, `${wrong} answered 会议密码错误`);
  // The right password gets in only when it was one of the guesses checked.
  assert.ok(joined === 0 || checked === wrong + 1, 'only a checked guess can join');
}

describe('meeting password guesses in parallel: one node', () => {
  let app: TestHttpApp;
  const c = meetingClient(() => app.http);
  before(async () => {
    app = await startTestHttpApp();
    await c.users(['host', 'thief', 'other', 'h2', 'g2']);
  });
  after(() => app?.close());

  it('checks at most 5 of 30 parallel guesses; the right one sent last is locked out', async () => {
    const created = await c.call('POST', '/meeting/rooms', {
      as: 'host',
      body: { title: '锁', password: RIGHT },
    });
    assert.equal(created.status, 201);
    const code = created.body.data.room.room_code as string;
    const result = await guess(c, code, [undefined]);
    judge(result);
    const last = result.replies.at(-1)!;
    if (last.status !== 200) {
      assert.equal(last.body.message, '密码尝试过多，请稍后再试');
      const again = await c.call('POST', `/meeting/rooms/${code}/join`, {
        as: 'thief',
        body: { password: RIGHT },
      });
      assert.equal(again.body.message, '密码尝试过多，请稍后再试');
    }
    // The lock is the thief's alone: another user with the right password gets in.
    const other = await c.call('POST', `/meeting/rooms/${code}/join`, {
      as: 'other',
      body: { password: RIGHT },
    });
    assert.equal(other.status, 200, JSON.stringify(other.body));
  });

  it('a right password among the 5 checked joins and clears the count', async () => {
    const created = await c.call('POST', '/meeting/rooms', {
      as: 'h2',
      body: { title: '锁2', password: RIGHT },
    });
    const code = created.body.data.room.room_code as string;
    const join = (password: string) =>
      c.call('POST', `/meeting/rooms/${code}/join`, { as: 'g2', body: { password } });
    for (let i = 0; i < 4; i++) assert.equal((await join(`bad-${i}`)).body.message, '会议密码错误');
    assert.equal((await join(RIGHT)).status, 200);
    await c.call('POST', `/meeting/rooms/${code}/leave`, { as: 'g2', body: {} });
    // Cleared: five more wrong ones before the lock.
    for (let i = 0; i < 5; i++) assert.equal((await join(`bad-${i}`)).body.message, '会议密码错误');
    assert.equal((await join(RIGHT)).body.message, '密码尝试过多，请稍后再试');
  });
});

const skip = await clusterSkipReason();

describe('meeting password guesses in parallel: two nodes', { skip }, () => {
  const nodes: RoomsNode[] = [];
  const keyPrefix = testKeyPrefix();
  let drop: () => Promise<void> = () => Promise.resolve();
  const c = meetingClient(() => nodes[0]!.http);

  before(async () => {
    const database = await createTestDatabase();
    drop = () => database.drop();
    for (const name of ['a', 'b']) {
      nodes.push(
        await startNode(
          loadConfig({
            ROOMS_NODE_ID: `pwd-${name}`,
            ROOMS_ROLES: 'edge,cells,relay',
            ROOMS_DB_URL: database.url,
            ROOMS_DB_POOL_SIZE: '4',
            ROOMS_REDIS_URL: testRedisUrl(),
            ROOMS_KEY_PREFIX: keyPrefix,
            ROOMS_JWT_SECRET: 'pwd-race-secret-0123456789abcdef0123',
            ROOMS_GRPC_TOKEN: 'pwd-race-grpc-token-0123456789abcdef0',
            ROOMS_HTTP_HOST: '127.0.0.1',
            ROOMS_HTTP_PORT: '0',
            ROOMS_GRPC_PORT: '0',
            ROOMS_LOG_LEVEL: 'silent',
            ROOMS_BCRYPT_COST: '4',
          }),
        ),
      );
    }
    await c.users(['host', 'thief']);
  });
  after(async () => {
    for (const node of nodes) await node.close();
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
    await drop();
  });
  it('checks at most 5 of 30 guesses spread over both nodes', async () => {
    const created = await c.call('POST', '/meeting/rooms', {
      as: 'host',
      body: { title: '锁', password: RIGHT },
    });
    assert.equal(created.status, 201);
    const code = created.body.data.room.room_code as string;
    const result = await guess(c, code, [nodes[0]!.http, nodes[1]!.http]);
    judge(result);
    const again = await c.call('POST', `/meeting/rooms/${code}/join`, {
      as: 'thief',
      body: { password: RIGHT },
      via: nodes[1]!.http,
    });
    if (result.replies.every((r) => r.status !== 200)) {
      assert.equal(again.body.message, '密码尝试过多，请稍后再试');
    }
  });
});
