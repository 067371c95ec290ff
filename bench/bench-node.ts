/**
 * One real node in the bench process (its HTTP API on loopback, its `/ws`, the embedded
 * media server with one worker), on the embedded backend (SQLite in a temporary folder) or
 * the cluster backend (MariaDB + Redis, a fresh database and key prefix). Quotas and frame
 * limits are lifted: benches create and join far faster than people.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../src/cell/testing/harness.js';
import { loadConfig } from '../src/main/config.js';
import { startNode, type RoomsNode } from '../src/main/node.js';
import {
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../src/testing/backends.js';

export async function openBenchNode(
  cluster: boolean,
  extraEnv: Record<string, string> = {},
): Promise<{ base: string; node: RoomsNode; close: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'rooms-bench-meeting-'));
  const closers: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })];
  const env: Record<string, string> = {
    ROOMS_DB_URL: join(dir, 'rooms.sqlite'),
    ROOMS_HTTP_HOST: '127.0.0.1',
    ROOMS_HTTP_PORT: '0',
    ROOMS_GRPC_PORT: '0',
    ROOMS_MEDIA_PORT: '0',
    ROOMS_MEDIA_WORKERS: '1',
    ROOMS_BCRYPT_COST: '4',
    ROOMS_LOG_LEVEL: 'silent',
    // The bench creates and joins far faster than a person: no quotas in the way.
    ROOMS_ROOM_CREATE_LIMIT: '0',
    ROOMS_MAX_OPEN_ROOMS_PER_OWNER: '0',
    ROOMS_MEETING_CREATE_LIMIT: '0',
    ROOMS_MAX_OPEN_MEETINGS_PER_HOST: '0',
    ROOMS_MEETING_CHATS_PER_USER: '0',
    ROOMS_WS_MAX_FRAMES_PER_S: '100000',
    ROOMS_WS_FRAME_BURST: '100000',
  };
  if (cluster) {
    const database = await createTestDatabase();
    const keyPrefix = testKeyPrefix();
    closers.push(() => database.drop());
    closers.push(() => deleteKeysWithPrefix(testRedisUrl(), keyPrefix));
    Object.assign(env, {
      ROOMS_DB_URL: database.url,
      ROOMS_DB_POOL_SIZE: '16',
      ROOMS_REDIS_URL: testRedisUrl(),
      ROOMS_KEY_PREFIX: keyPrefix,
      ROOMS_JWT_SECRET: 'bench-meeting-secret-0123456789abcdef',
      ROOMS_GRPC_TOKEN: 'bench-meeting-grpc-token-0123456789abcdef',
    });
  }
  const node: RoomsNode = await startNode(loadConfig({ ...env, ...extraEnv }), silentLogger);
  closers.push(() => node.close());
  return {
    base: node.httpAddress,
    node,
    close: async () => {
      for (const close of closers.reverse()) await close().catch(() => undefined);
    },
  };
}
