/**
 * The accounts REST contract (register, login, me, the bearer guard), through a whole node
 * (`startNode`) and Fastify `inject`. Runs on SQLite and on MariaDB.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { JwtTokens } from '../../accounts/tokens.js';
import { loadConfig } from '../../main/config.js';
import { startNode, type RoomsNode } from '../../main/node.js';

export interface AuthTestBackend {
  /** `ROOMS_*` variables naming the database (and the secret, if configured). */
  readonly env: Readonly<Record<string, string>>;
  /** The secret the node signs with (configured, or read from the generated file). */
  secret(): Promise<string>;
  close(): Promise<void>;
}

const TTL_S = 3_600;
let nodeSeq = 0;

/**
 * Test settings of a node: loopback, free ports, no embedded media server (the accounts need
 * none, and its fixed port would collide across nodes), silent, bcrypt cost 4.
 */
export const TEST_NODE_ENV: Readonly<Record<string, string>> = {
  ROOMS_HTTP_HOST: '127.0.0.1',
  ROOMS_HTTP_PORT: '0',
  ROOMS_GRPC_HOST: '127.0.0.1',
  ROOMS_GRPC_PORT: '0',
  ROOMS_GRPC_TOKEN: 'accounts-test-grpc-token-0123456789abcdef',
  ROOMS_MEDIA_EMBEDDED: 'false',
  ROOMS_MEDIA_INTERNAL_TOKEN: 'unused-by-the-accounts-tests',
  ROOMS_LOG_LEVEL: process.env.ROOMS_TEST_LOG ?? 'silent',
  ROOMS_BCRYPT_COST: '4',
  ROOMS_JWT_TTL_S: String(TTL_S),
};

/** A node on `env` (database, secret) with {@link TEST_NODE_ENV}. */
export function startTestNode(env: Readonly<Record<string, string>>): Promise<RoomsNode> {
  return startNode(
    loadConfig({
      ...TEST_NODE_ENV,
      ROOMS_NODE_ID: `auth-test-${process.pid}-${++nodeSeq}`,
      ...env,
    }),
  );
}

export interface UserBody {
  id: number;
  username: string;
  nickname: string;
  avatar: string;
  app_code: string;
  created_at: string;
}

export interface Envelope<T = unknown> {
  code: number;
  message: string;
  reason?: string;
  data?: T;
  trace_id: string;
  time: string;
}

interface CallOptions {
  body?: unknown;
  token?: string;
  app?: string;
  headers?: Record<string, string>;
  /** The client's IP address as the node sees it (default 127.0.0.1). */
  from?: string;
}

/** A small client over `inject` for one node. */
export function client(node: RoomsNode) {
  const call = (method: 'GET' | 'POST', url: string, options: CallOptions = {}) =>
    node.http.inject({
      method,
      url,
      headers: {
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        ...(options.app ? { 'x-app-code': options.app } : {}),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { payload: options.body as object }),
      ...(options.from ? { remoteAddress: options.from } : {}),
    });
  return {
    register: (body: unknown, app?: string, from?: string) =>
      call('POST', '/api/v1/auth/register', {
        body,
        ...(app ? { app } : {}),
        ...(from ? { from } : {}),
      }),
    login: (body: unknown, app?: string, from?: string) =>
      call('POST', '/api/v1/auth/login', {
        body,
        ...(app ? { app } : {}),
        ...(from ? { from } : {}),
      }),
    me: (token?: string, options: CallOptions = {}) =>
      call('GET', '/api/v1/users/me', { ...options, ...(token ? { token } : {}) }),
    /** Registers then logs in; returns the token and the user. */
    async signUp(username: string, password = 'secret1', app?: string) {
      const registered = await this.register({ username, password }, app);
      assert.equal(registered.statusCode, 201, registered.body);
      const loggedIn = await this.login({ username, password }, app);
      assert.equal(loggedIn.statusCode, 200, loggedIn.body);
      const data = envelope<{ access_token: string; user: UserBody }>(loggedIn).data!;
      return { token: data.access_token, user: data.user };
    },
  };
}

export function envelope<T = unknown>(res: LightMyRequestResponse): Envelope<T> {
  return res.json<Envelope<T>>();
}

const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** Asserts a failure envelope with this status (and reason, when given). */
export function assertFailure(res: LightMyRequestResponse, status: number, reason?: string) {
  assert.equal(res.statusCode, status, res.body);
  const body = envelope(res);
  assert.equal(body.code, status);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  assert.equal(body.data, undefined);
  assert.equal(typeof body.trace_id, 'string');
  assert.match(body.time, TIME);
  if (reason) assert.equal(body.reason, reason);
  return body;
}

export function authRoutesContract(
  name: string,
  openBackend: () => Promise<AuthTestBackend>,
  options: { skip?: string | false } = {},
): void {
  describe(`accounts REST contract (${name})`, { skip: options.skip ?? false }, () => {
    let backend: AuthTestBackend;
    let node: RoomsNode;
    let api: ReturnType<typeof client>;

    before(async () => {
      backend = await openBackend();
      node = await startTestNode(backend.env);
      api = client(node);
    });
    after(async () => {
      await node?.close();
      await backend?.close();
    });

    it('registers a user (201) and returns it without any password field', async () => {
      const before = Date.now();
      const res = await api.register({ username: 'alice', password: 'secret1' });
      assert.equal(res.statusCode, 201, res.body);
      const body = envelope<UserBody>(res);
      assert.equal(body.code, 0);
      const user = body.data!;
      assert.equal(typeof user.id, 'number');
      assert.ok(Number.isSafeInteger(user.id) && user.id > 0);
      assert.deepEqual(
        { ...user, id: 0, created_at: '' },
        {
          id: 0,
          username: 'alice',
          nickname: 'alice',
          avatar: '',
          app_code: 'default',
          created_at: '',
        },
      );
      assert.match(user.created_at, TIME);
      const created = new Date(user.created_at.replace(' ', 'T')).getTime();
      assert.ok(created >= before - 1_000 && created <= Date.now(), user.created_at);
      assert.doesNotMatch(res.body, /password|\$2[aby]\$/);
    });

    it('keeps nickname and avatar, Unicode included', async () => {
      const res = await api.register({
        username: 'nick.name',
        password: 'secret1',
        nickname: '小明 🎤',
        avatar: 'https://cdn.example.com/u/1.png',
      });
      assert.equal(res.statusCode, 201, res.body);
      const { token } = await api.signUp('someone-else');
      assert.ok(token);
      const login = await api.login({ username: 'nick.name', password: 'secret1' });
      const user = envelope<{ user: UserBody }>(login).data!.user;
      assert.equal(user.nickname, '小明 🎤');
      assert.equal(user.avatar, 'https://cdn.example.com/u/1.png');
    });

    it('refuses an invalid body or X-App-Code with 400', async () => {
      assertFailure(await api.register({ username: 'ab', password: 'secret1' }), 400, 'VALIDATION');
      assertFailure(await api.register({ username: 'valid', password: '123' }), 400, 'VALIDATION');
      assertFailure(await api.register({ username: 'valid' }), 400, 'VALIDATION');
      assertFailure(await api.register(undefined), 400);
      assertFailure(
        await api.register({ username: 'valid', password: 'secret1' }, 'Bad App'),
        400,
        'INVALID_APP_CODE',
      );
      assertFailure(await api.login({ username: 'valid' }), 400, 'VALIDATION');
    });

    it('refuses a duplicate username in the same app (409), case-insensitively', async () => {
      await api.signUp('Carol');
      for (const username of ['Carol', 'carol', 'CAROL']) {
        const res = await api.register({ username, password: 'other-pw' });
        assertFailure(res, 409, 'USERNAME_TAKEN');
      }
      // Login is case-insensitive too, and shows the name as registered.
      const login = await api.login({ username: 'cAROL', password: 'secret1' });
      assert.equal(login.statusCode, 200, login.body);
      assert.equal(envelope<{ user: UserBody }>(login).data!.user.username, 'Carol');
    });

    it('lets another app have the same username, as a different user', async () => {
      const here = await api.signUp('dave', 'password-default');
      const there = await api.signUp('Dave', 'password-other', 'other-app');
      assert.notEqual(there.user.id, here.user.id);
      assert.equal(there.user.app_code, 'other-app');
      assert.equal(here.user.app_code, 'default');
      // Each app checks its own user's password.
      assertFailure(
        await api.login({ username: 'dave', password: 'password-other' }),
        401,
        'INVALID_CREDENTIALS',
      );
      assertFailure(
        await api.login({ username: 'dave', password: 'password-default' }, 'other-app'),
        401,
        'INVALID_CREDENTIALS',
      );
      // The token carries the app: /me answers for it whatever X-App-Code says.
      const me = await api.me(there.token, { app: 'default' });
      assert.equal(me.statusCode, 200, me.body);
      assert.deepEqual(envelope<UserBody>(me).data, there.user);
      // An app with no such user at all.
      assertFailure(
        await api.login({ username: 'dave', password: 'password-default' }, 'third'),
        401,
      );
    });

    it('logs in (200) with a bearer token for the user, not cached', async () => {
      const registered = envelope<UserBody>(
        await api.register({ username: 'erin', password: 'secret1' }),
      ).data!;
      const res = await api.login({ username: 'erin', password: 'secret1' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const data = envelope<Record<string, unknown>>(res).data!;
      assert.deepEqual(Object.keys(data).sort(), [
        'access_token',
        'expires_in',
        'token_type',
        'user',
      ]);
      assert.equal(data.token_type, 'Bearer');
      assert.equal(data.expires_in, TTL_S);
      assert.deepEqual(data.user, registered);
      const identity = await node.accounts.authenticate(data.access_token as string);
      assert.deepEqual(identity, {
        userId: String(registered.id),
        appCode: 'default',
        username: 'erin',
      });
    });

    it('answers a wrong password and an unknown username alike (401, one message)', async () => {
      await api.signUp('frank');
      const wrongPassword = assertFailure(
        await api.login({ username: 'frank', password: 'not-it!' }),
        401,
        'INVALID_CREDENTIALS',
      );
      const unknownUser = assertFailure(
        await api.login({ username: 'nobody', password: 'secret1' }),
        401,
        'INVALID_CREDENTIALS',
      );
      const impossible = assertFailure(
        await api.login({ username: 'not a valid name', password: 'secret1' }),
        401,
        'INVALID_CREDENTIALS',
      );
      assert.equal(wrongPassword.message, unknownUser.message);
      assert.equal(impossible.message, unknownUser.message);
    });

    it('GET /users/me returns the token’s user', async () => {
      const { token, user } = await api.signUp('grace');
      const res = await api.me(token);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(envelope<UserBody>(res).data, user);
    });

    it('GET /users/me answers 401 with the envelope without a valid token', async () => {
      const { token, user } = await api.signUp('heidi');
      const missing = assertFailure(await api.me(), 401, 'TOKEN_MISSING');
      assert.equal(missing.message, '未登录或登录已过期');
      assertFailure(await api.me(undefined, { headers: { authorization: token } }), 401);
      assertFailure(await api.me(undefined, { headers: { authorization: `Basic ${token}` } }), 401);
      assertFailure(await api.me('not-a-jwt'), 401, 'TOKEN_INVALID');
      const [h, p, s] = token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as object;
      const forged = Buffer.from(JSON.stringify({ ...claims, sub: '999999' })).toString(
        'base64url',
      );
      assertFailure(await api.me(`${h}.${forged}.${s}`), 401, 'TOKEN_INVALID');

      const identity = { userId: String(user.id), appCode: 'default', username: 'heidi' };
      const hourAgo = { nowMs: () => Date.now() - 3_600_000 };
      const expired = await new JwtTokens({
        secret: await backend.secret(),
        ttlS: 60,
        clock: hourAgo,
      }).issue(identity);
      assertFailure(await api.me(expired.token), 401, 'TOKEN_INVALID');
      const foreign = await new JwtTokens({
        secret: 'some-other-deployment-secret-32-bytes!',
        ttlS: 60,
        clock: { nowMs: () => Date.now() },
      }).issue(identity);
      assertFailure(await api.me(foreign.token), 401, 'TOKEN_INVALID');
      // A well-signed token for a user that does not exist (e.g. a recreated database).
      const ghost = await new JwtTokens({
        secret: await backend.secret(),
        ttlS: 60,
        clock: { nowMs: () => Date.now() },
      }).issue({ ...identity, userId: '987654321' });
      assertFailure(await api.me(ghost.token), 401, 'USER_NOT_FOUND');
    });

    it('locks an account after 10 failed logins: then even the right password gets 429', async () => {
      await api.signUp('mallory-target', 'right-password');
      const statuses: number[] = [];
      // 60 wrong passwords, each from its own address: only the account limit can apply.
      for (let i = 0; i < 60; i++) {
        const res = await api.login(
          { username: 'mallory-target', password: `guess-${i}` },
          undefined,
          `10.11.${Math.floor(i / 250)}.${(i % 250) + 1}`,
        );
        statuses.push(res.statusCode);
      }
      assert.deepEqual(statuses.slice(0, 10), Array<number>(10).fill(401));
      assert.deepEqual(statuses.slice(10), Array<number>(50).fill(429));
      const right = await api.login(
        { username: 'MALLORY-TARGET', password: 'right-password' },
        undefined,
        '10.11.9.9',
      );
      const body = assertFailure(right, 429, 'LOGIN_RATE_LIMITED');
      assert.match(body.message, /登录失败次数过多/);
      const retryAfter = Number(right.headers['retry-after']);
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 900,
        `${retryAfter}`,
      );
      assert.doesNotMatch(right.body, /access_token/);
      // Another account is not affected, nor the same name in another app.
      const other = await api.signUp('bystander');
      assert.ok(other.token);
      const elsewhere = await api.signUp('mallory-target', 'right-password', 'other-app');
      assert.ok(elsewhere.token);
    });

    it('counts unknown usernames like known ones (the lockout reveals no accounts)', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) {
        const res = await api.login(
          { username: 'no-such-user', password: 'x' },
          undefined,
          `10.12.0.${i + 1}`,
        );
        statuses.push(res.statusCode);
      }
      assert.deepEqual(statuses, [...Array<number>(10).fill(401), 429]);
    });

    it('refuses concurrent guesses past the limit too (at most a few more are checked)', async () => {
      await api.signUp('parallel-target', 'right-password');
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          api.login(
            { username: 'parallel-target', password: `guess-${i}` },
            undefined,
            `10.13.0.${i + 1}`,
          ),
        ),
      );
      const checked = results.filter((r) => r.statusCode === 401).length;
      const refused = results.filter((r) => r.statusCode === 429).length;
      assert.equal(checked + refused, 60);
      // 10, plus at most the attempts already hashing when the tenth failure landed.
      assert.ok(checked >= 10 && checked <= 20, `${checked} wrong passwords were checked`);
      const right = await api.login({ username: 'parallel-target', password: 'right-password' });
      assertFailure(right, 429, 'LOGIN_RATE_LIMITED');
    });

    it('limits failed logins per client address (50), across accounts; other addresses are unaffected', async () => {
      const victim = await api.signUp('address-victim', 'right-password');
      assert.ok(victim.token);
      const attacker = '10.14.0.66';
      const statuses: number[] = [];
      for (let i = 0; i < 51; i++) {
        const res = await api.login(
          { username: `spray-${i}`, password: 'Winter2026!' },
          undefined,
          attacker,
        );
        statuses.push(res.statusCode);
      }
      assert.deepEqual(statuses, [...Array<number>(50).fill(401), 429]);
      // From that address, even a correct login waits; from another it goes through.
      const blocked = await api.login(
        { username: 'address-victim', password: 'right-password' },
        undefined,
        attacker,
      );
      assertFailure(blocked, 429, 'LOGIN_RATE_LIMITED');
      assert.ok(Number(blocked.headers['retry-after']) >= 1);
      const fine = await api.login(
        { username: 'address-victim', password: 'right-password' },
        undefined,
        '10.14.0.67',
      );
      assert.equal(fine.statusCode, 200, fine.body);
    });

    it('never throttles successful logins and registrations: 60 users behind one address', async () => {
      const office = '10.15.0.1';
      for (let i = 0; i < 60; i++) {
        const username = `colleague-${i}`;
        const registered = await api.register({ username, password: 'secret1' }, undefined, office);
        assert.equal(registered.statusCode, 201, registered.body);
        for (let n = 0; n < 2; n++) {
          const login = await api.login({ username, password: 'secret1' }, undefined, office);
          assert.equal(login.statusCode, 200, login.body);
        }
      }
      // A few typos among them do not lock the office out either.
      for (let i = 0; i < 5; i++) {
        assertFailure(
          await api.login({ username: `colleague-${i}`, password: 'typo!' }, undefined, office),
          401,
        );
      }
      const login = await api.login(
        { username: 'colleague-0', password: 'secret1' },
        undefined,
        office,
      );
      assert.equal(login.statusCode, 200, login.body);
    });

    it('registers one of several concurrent requests for one username; the rest get 409', async () => {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          api.register({ username: i % 2 ? 'Ivan' : 'ivan', password: `secret-${i}` }),
        ),
      );
      const statuses = results.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409]);
    });
  });
}
