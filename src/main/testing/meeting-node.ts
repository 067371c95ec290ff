/**
 * Test-only: one real node (embedded SQLite, embedded media server with one worker, free
 * ports) with users, for the meeting tests that go through REST and `/ws` only. Silent
 * unless given a logger.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { silentLogger } from '../../cell/testing/harness.js';
import { meetingClient, type MeetingClient } from '../../meeting/api/testing/meeting-client.js';
import { TestClient } from '../../edge/ws/testing/ws-client.js';
import { loadConfig } from '../config.js';
import { startNode, type RoomsNode } from '../node.js';

export interface MeetingNode {
  readonly node: RoomsNode;
  readonly api: MeetingClient;
  /** A `/ws` socket of the named user (closed by `close()`). */
  socket(who: string): Promise<TestClient>;
  close(): Promise<void>;
}

export async function startMeetingNode(
  users: readonly string[],
  env: Record<string, string> = {},
  logger: Logger = silentLogger,
): Promise<MeetingNode> {
  const dir = await mkdtemp(join(tmpdir(), 'rooms-meeting-node-'));
  const node = await startNode(
    loadConfig({
      ROOMS_DB_URL: join(dir, 'rooms.sqlite'),
      ROOMS_HTTP_HOST: '127.0.0.1',
      ROOMS_HTTP_PORT: '0',
      ROOMS_GRPC_PORT: '0',
      ROOMS_MEDIA_PORT: '0',
      ROOMS_MEDIA_WORKERS: '1',
      ROOMS_BCRYPT_COST: '4',
      ROOMS_LOG_LEVEL: 'silent',
      ...env,
    }),
    logger,
  );
  const api = meetingClient(() => node.http);
  await api.users(users);
  const sockets: TestClient[] = [];
  return {
    node,
    api,
    async socket(who) {
      const url = `${node.httpAddress.replace(/^http/, 'ws')}/ws?token=${api.tokens[who]}`;
      const client = await TestClient.connect(url);
      sockets.push(client);
      return client;
    },
    async close() {
      for (const s of sockets) s.close();
      await node.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
