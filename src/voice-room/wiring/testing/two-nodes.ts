/**
 * Test-only: two full nodes without media (edge, cells, relay) on one fresh MariaDB database
 * and Redis key prefix, their users registered, and what their tests compare answers with.
 */
import assert from 'node:assert/strict';
import { meetingClient, type MeetingClient } from '../../../meeting/api/testing/meeting-client.js';
import {
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../../testing/backends.js';
import { loadConfig } from '../../../main/config.js';
import { startNode, type RoomsNode } from '../../../main/node.js';

export interface Answer {
  status: number;
  body: { code: number; reason?: string; data?: unknown };
}

export interface TwoNodes {
  readonly nodes: readonly [RoomsNode, RoomsNode];
  /** Calls as a registered user (`as`), on node a unless `via` says otherwise. */
  readonly api: MeetingClient;
  readonly grpcToken: string;
  close(): Promise<void>;
}

export async function startTwoNodes(
  name: string,
  users: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<TwoNodes> {
  const database = await createTestDatabase();
  const keyPrefix = testKeyPrefix();
  const grpcToken = `${name}-grpc-token-0123456789abcdef`;
  const nodes: RoomsNode[] = [];
  const close = async () => {
    for (const node of nodes) await node.close();
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
    await database.drop();
  };
  try {
    for (const node of ['a', 'b']) {
      const config = loadConfig({
        ROOMS_NODE_ID: `${name}-${node}`,
        ROOMS_DB_URL: database.url,
        ROOMS_DB_POOL_SIZE: '4',
        ROOMS_REDIS_URL: testRedisUrl(),
        ROOMS_KEY_PREFIX: keyPrefix,
        ROOMS_JWT_SECRET: `${name}-jwt-secret-0123456789abcdef`,
        ROOMS_GRPC_TOKEN: grpcToken,
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: '0',
        ROOMS_GRPC_PORT: '0',
        ROOMS_ROLES: 'edge,cells,relay',
        ROOMS_LOG_LEVEL: 'silent',
        ROOMS_BCRYPT_COST: '4',
        ...env,
      });
      nodes.push(await startNode(config));
    }
    const api = meetingClient(() => nodes[0]!.http);
    await api.users(users);
    return { nodes: nodes as [RoomsNode, RoomsNode], api, grpcToken, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** An answer's `data`, once it is a success. */
export async function okData(answer: Promise<Answer>): Promise<Record<string, unknown>> {
  const { status, body } = await answer;
  assert.ok(status < 300, JSON.stringify(body));
  return body.data as Record<string, unknown>;
}

/**
 * The answer without what differs per call (its trace id and time) and `duplicate`, which
 * a retry of a committed command sets (its first answer otherwise).
 */
export function sameAnswer({ status, body }: Answer) {
  const { trace_id: _t, time: _time, data, ...rest } = body as Record<string, unknown>;
  const { duplicate: _d, ...fields } = (data ?? {}) as Record<string, unknown>;
  return { status, rest, fields };
}
