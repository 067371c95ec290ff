/**
 * The accounts contract on the cluster backend (MariaDB): nodes share one configured secret,
 * and a node without one refuses to start.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createConnection } from 'mysql2/promise';
import { loadConfig } from '../../main/config.js';
import { startNode } from '../../main/node.js';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import {
  assertFailure,
  authRoutesContract,
  client,
  envelope,
  startTestNode,
  TEST_NODE_ENV,
} from './auth-routes.contract.js';

const skip = await clusterSkipReason();
const SECRET = 'mariadb-test-secret-of-at-least-32-bytes';

authRoutesContract(
  'MariaDB',
  async () => {
    const database = await createTestDatabase();
    return {
      env: { ROOMS_DB_URL: database.url, ROOMS_DB_POOL_SIZE: '4', ROOMS_JWT_SECRET: SECRET },
      secret: () => Promise.resolve(SECRET),
      close: () => database.drop(),
    };
  },
  { skip },
);

describe('accounts on the cluster backend (MariaDB)', { skip }, () => {
  it('a token issued by one node is accepted by another with the same secret', async () => {
    const database = await createTestDatabase();
    const env = { ROOMS_DB_URL: database.url, ROOMS_DB_POOL_SIZE: '2', ROOMS_JWT_SECRET: SECRET };
    const nodes = [];
    try {
      nodes.push(await startTestNode(env), await startTestNode(env));
      const [a, b] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
      const { token, user } = await client(a).signUp('liam');
      const me = await client(b).me(token);
      assert.equal(me.statusCode, 200, me.body);
      assert.deepEqual(envelope(me).data, user);
      // And the username is taken cluster-wide.
      const again = await client(b).register({ username: 'LIAM', password: 'secret1' });
      assert.equal(again.statusCode, 409, again.body);
    } finally {
      for (const node of nodes) await node.close();
      await database.drop();
    }
  });

  it('counts failed logins across nodes (Redis): a lockout on one node holds on the other', async () => {
    const database = await createTestDatabase();
    const keyPrefix = testKeyPrefix();
    const env = {
      ROOMS_DB_URL: database.url,
      ROOMS_DB_POOL_SIZE: '2',
      ROOMS_JWT_SECRET: SECRET,
      ROOMS_REDIS_URL: testRedisUrl(),
      ROOMS_KEY_PREFIX: keyPrefix,
    };
    const nodes = [];
    try {
      nodes.push(await startTestNode(env), await startTestNode(env));
      const [a, b] = nodes.map(client) as [ReturnType<typeof client>, ReturnType<typeof client>];
      await a.signUp('noah', 'right-password');
      // Ten failures, alternating nodes and addresses: each node alone saw only five.
      for (let i = 0; i < 10; i++) {
        const res = await (i % 2 ? a : b).login(
          { username: 'noah', password: `guess-${i}` },
          undefined,
          `10.21.0.${i + 1}`,
        );
        assert.equal(res.statusCode, 401, res.body);
      }
      for (const node of [a, b]) {
        const res = await node.login({ username: 'noah', password: 'right-password' });
        assertFailure(res, 429, 'LOGIN_RATE_LIMITED');
        assert.ok(Number(res.headers['retry-after']) >= 1);
      }
      // The address limit is shared too: 50 failures from one address across both nodes.
      for (let i = 0; i < 50; i++) {
        const res = await (i % 2 ? a : b).login(
          { username: `spray-${i}`, password: 'x' },
          undefined,
          '10.21.1.1',
        );
        assert.equal(res.statusCode, 401, res.body);
      }
      assertFailure(
        await a.login({ username: 'spray-x', password: 'x' }, undefined, '10.21.1.1'),
        429,
        'LOGIN_RATE_LIMITED',
      );
    } finally {
      for (const node of nodes) await node.close();
      await deleteKeysWithPrefix(testRedisUrl(), keyPrefix);
      await database.drop();
    }
  });

  it('without ROOMS_JWT_SECRET a node refuses to start, naming it, before opening the database', async () => {
    const database = await createTestDatabase();
    try {
      const env = { ...TEST_NODE_ENV, ROOMS_DB_URL: database.url };
      // From the environment: a configuration error (exit code 2 in `npm start`).
      assert.throws(() => loadConfig(env), /ROOMS_JWT_SECRET/);
      // A config built in code is refused by startNode all the same.
      const config = { ...loadConfig({ ...env, ROOMS_JWT_SECRET: SECRET }) };
      const unset = { ...config, accounts: { ...config.accounts, jwtSecret: null } };
      await assert.rejects(startNode(unset), /ROOMS_JWT_SECRET/);
      const connection = await createConnection({ uri: database.url });
      try {
        const [rows] = await connection.query(
          'SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = ?',
          [database.name],
        );
        assert.deepEqual(rows, [{ n: 0 }]);
      } finally {
        await connection.end();
      }
    } finally {
      await database.drop();
    }
  });
});
