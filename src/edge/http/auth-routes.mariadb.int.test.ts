/**
 * The accounts contract on the cluster backend (MariaDB): nodes share one configured secret,
 * and a node without one refuses to start.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createConnection } from 'mysql2/promise';
import { loadConfig } from '../../main/config.js';
import { startNode } from '../../main/node.js';
import { clusterSkipReason, createTestDatabase } from '../../testing/backends.js';
import {
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
