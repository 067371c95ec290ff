/**
 * `GET /api/v1/users?ids=` from outside (a whole node, Fastify `inject`), on SQLite and on
 * MariaDB: the caller's app only, the documented refusals, the cap on the count.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MAX_USER_LOOKUP } from '../../accounts/validation.js';
import type { RoomsNode } from '../../main/node.js';
import { clusterSkipReason, createTestDatabase } from '../../testing/backends.js';
import { assertFailure, client, envelope, startTestNode } from './auth-routes.contract.js';

interface Looked {
  id: number;
  username: string;
  nickname: string;
  avatar: string;
}

const backends: {
  name: string;
  skip: string | false;
  open: () => Promise<{ env: Record<string, string>; close: () => Promise<void> }>;
}[] = [
  {
    name: 'SQLite',
    skip: false,
    open: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'rooms-users-'));
      return {
        env: { ROOMS_DB_URL: join(dir, 'rooms.sqlite') },
        close: () => rm(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'MariaDB',
    skip: await clusterSkipReason(),
    open: async () => {
      const database = await createTestDatabase();
      return {
        env: {
          ROOMS_DB_URL: database.url,
          ROOMS_DB_POOL_SIZE: '2',
          ROOMS_JWT_SECRET: 'user-lookup-test-secret-of-32-bytes-or-more',
        },
        close: () => database.drop(),
      };
    },
  },
];

for (const backend of backends) {
  describe(`GET /api/v1/users?ids= (${backend.name})`, { skip: backend.skip }, () => {
    let node: RoomsNode;
    let close: () => Promise<void>;
    let api: ReturnType<typeof client>;
    let alice: { token: string; user: { id: number } };
    let bob: { token: string; user: { id: number } };
    let other: { token: string; user: { id: number } };

    const lookup = (query: string, token?: string) =>
      node.http.inject({
        method: 'GET',
        url: `/api/v1/users${query}`,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
    const listOf = (res: Awaited<ReturnType<typeof lookup>>) => {
      assert.equal(res.statusCode, 200, res.body);
      return envelope<{ list: Looked[] }>(res).data!.list;
    };

    before(async () => {
      const opened = await backend.open();
      close = opened.close;
      node = await startTestNode(opened.env);
      api = client(node);
      const registered = await api.register({
        username: 'lookup_alice',
        password: 'secret1',
        nickname: '爱丽丝',
        avatar: 'https://cdn.example.com/a.png',
      });
      assert.equal(registered.statusCode, 201, registered.body);
      const login = await api.login({ username: 'lookup_alice', password: 'secret1' });
      const data = envelope<{ access_token: string; user: { id: number } }>(login).data!;
      alice = { token: data.access_token, user: data.user };
      bob = await api.signUp('lookup_bob');
      other = await api.signUp('lookup_carol', 'secret1', 'other-app');
    });
    after(async () => {
      await node?.close();
      await close?.();
    });

    it('answers the names of users of the caller’s app, in the order asked, repeats once', async () => {
      const list = listOf(
        await lookup(`?ids=${bob.user.id},${alice.user.id},${bob.user.id}`, bob.token),
      );
      assert.deepEqual(list, [
        { id: bob.user.id, username: 'lookup_bob', nickname: 'lookup_bob', avatar: '' },
        {
          id: alice.user.id,
          username: 'lookup_alice',
          nickname: '爱丽丝',
          avatar: 'https://cdn.example.com/a.png',
        },
      ]);
      // A repeated parameter is one list; spaces around ids are fine.
      const repeated = listOf(await lookup(`?ids=${alice.user.id}&ids= ${bob.user.id}`, bob.token));
      assert.deepEqual(
        repeated.map((u) => u.id),
        [alice.user.id, bob.user.id],
      );
    });

    it('leaves out unknown ids and every user of another app, both ways', async () => {
      const mine = listOf(
        await lookup(`?ids=${alice.user.id},${other.user.id},987654321`, alice.token),
      );
      assert.deepEqual(
        mine.map((u) => u.id),
        [alice.user.id],
      );
      const res = await lookup(`?ids=${alice.user.id},${bob.user.id}`, other.token);
      assert.deepEqual(listOf(res), []);
      assert.doesNotMatch(res.body, /lookup_alice|lookup_bob|爱丽丝/);
      const own = listOf(await lookup(`?ids=${other.user.id}`, other.token));
      assert.deepEqual(
        own.map((u) => u.username),
        ['lookup_carol'],
      );
    });

    it('shows no password, app or dates', async () => {
      const res = await lookup(`?ids=${alice.user.id}`, alice.token);
      assert.deepEqual(Object.keys(listOf(res)[0]!).sort(), [
        'avatar',
        'id',
        'nickname',
        'username',
      ]);
      assert.doesNotMatch(res.body, /password|\$2[aby]\$|app_code|created_at/);
    });

    it('refuses a caller without a valid token (401)', async () => {
      assertFailure(await lookup(`?ids=${alice.user.id}`), 401, 'TOKEN_MISSING');
      assertFailure(await lookup(`?ids=${alice.user.id}`, 'not-a-jwt'), 401, 'TOKEN_INVALID');
    });

    it('refuses missing, empty and non-integer ids (400 VALIDATION)', async () => {
      for (const query of [
        '',
        '?ids=',
        '?ids=abc',
        '?ids=1.5',
        '?ids=-3',
        '?ids=0',
        '?ids=1,,2',
        '?ids=0x10',
        '?ids=1e3',
        '?ids=9007199254740993',
        `?ids=${alice.user.id},x`,
      ]) {
        const body = assertFailure(await lookup(query, alice.token), 400, 'VALIDATION');
        assert.match(body.message, /^参数错误: ids: /, query);
      }
    });

    it(`refuses more than ${MAX_USER_LOOKUP} distinct ids (400), takes exactly that many`, async () => {
      const ids = Array.from({ length: MAX_USER_LOOKUP }, (_, i) => i + 1);
      const atCap = listOf(await lookup(`?ids=${[...ids, ...ids].join(',')}`, alice.token));
      assert.ok(atCap.some((u) => u.id === alice.user.id));
      const over = assertFailure(
        await lookup(`?ids=${[...ids, MAX_USER_LOOKUP + 1].join(',')}`, alice.token),
        400,
        'VALIDATION',
      );
      assert.equal(over.message, `参数错误: ids: at most ${MAX_USER_LOOKUP} ids`);
    });

    it('searches the caller’s app by username or nickname prefix: names and ids only', async () => {
      const search = async (query: string, token = bob.token) => {
        const res = await lookup(`/search${query}`, token);
        assert.equal(res.statusCode, 200, res.body);
        return envelope<{ list: { id: number; username: string; nickname: string }[] }>(res).data!
          .list;
      };
      assert.deepEqual(await search('?prefix=LOOKUP_'), [
        { id: alice.user.id, username: 'lookup_alice', nickname: '爱丽丝' },
        { id: bob.user.id, username: 'lookup_bob', nickname: 'lookup_bob' },
      ]);
      assert.deepEqual(
        (await search(`?prefix=${encodeURIComponent('爱丽')}`)).map((u) => u.id),
        [alice.user.id],
      );
      assert.deepEqual(
        (await search('?prefix=lookup_&limit=1')).map((u) => u.username),
        ['lookup_alice'],
      );
      // The prefix's own wildcards match themselves only; another app's users are never listed.
      assert.deepEqual(await search('?prefix=%25'), []);
      assert.deepEqual(await search('?prefix=lookup%5Fb'), [
        { id: bob.user.id, username: 'lookup_bob', nickname: 'lookup_bob' },
      ]);
      assert.deepEqual(
        (await search('?prefix=lookup', other.token)).map((u) => u.username),
        ['lookup_carol'],
      );
      for (const query of [
        '',
        '?prefix=',
        `?prefix=${'x'.repeat(33)}`,
        '?prefix=a&limit=0',
        '?prefix=a&limit=21',
        '?prefix=a&limit=1e1',
        '?prefix=a&prefix=b',
      ]) {
        assertFailure(await lookup(`/search${query}`, bob.token), 400, 'VALIDATION');
      }
      assertFailure(await lookup('/search?prefix=a'), 401, 'TOKEN_MISSING');
    });
  });
}
