/**
 * Media failover in real browsers: two standalone media servers registered in Redis, one
 * node (MariaDB + Redis) serving the web client (web/), two Chromium pages in a meeting
 * receiving each other's audio and video. The meeting's media server is killed with
 * SIGKILL: the pages get `meeting.media.reset`, re-create their transports, producers and
 * consumers on the other server by themselves (no reload), and both receive media again
 * (inbound-rtp bytes growing). The gap, from the kill to both pages' media growing again,
 * is printed for the benchmark report.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { browserSkipReason, launchChromium } from '../media-server/testing/chromium.js';
import { mediaSkipReason } from '../media-server/testing/harness.js';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../testing/backends.js';
import { reportingOutput } from '../testing/server-process.js';
import { loadConfig } from '../main/config.js';
import { startNode, type RoomsNode } from '../main/node.js';
import { buildWebClient } from '../main/testing/web-client-pages.js';
import {
  CLUSTER_MEDIA_TOKEN,
  roomsOn,
  routerOn,
  spawnMediaServer,
  type RegisteredMediaServer,
} from '../main/testing/media-cluster.js';

/** Generous: two browsers, a node and two media servers share 2 loaded cores. */
const WAIT_MS = 30_000;
const skip = browserSkipReason() || (await clusterSkipReason()) || mediaSkipReason();

interface Received {
  userId: number;
  kind: string;
  bytes: number;
}
interface RoomsGlobal {
  rooms: { room: { received(): Promise<Received[]> } | null };
}

void describe('media failover in Chromium', { skip, timeout: 240_000 }, () => {
  const keyPrefix = testKeyPrefix();
  const redisUrl = testRedisUrl();
  let servers: RegisteredMediaServer[] = [];
  let node: RoomsNode;
  let browser: Browser;
  let drop: () => Promise<void> = () => Promise.resolve();

  before(async () => {
    buildWebClient();
    const common = { redisUrl, keyPrefix, ttlMs: 1_500 };
    servers = await Promise.all([
      spawnMediaServer({ ...common, id: 'media-a', rtcPorts: [44000, 44999] }),
      spawnMediaServer({ ...common, id: 'media-b', rtcPorts: [45000, 45999] }),
    ]);
    const database = await createTestDatabase();
    drop = () => database.drop();
    node = await startNode(
      loadConfig({
        ROOMS_NODE_ID: 'media-failover-web',
        ROOMS_DB_URL: database.url,
        ROOMS_DB_POOL_SIZE: '4',
        ROOMS_REDIS_URL: redisUrl,
        ROOMS_KEY_PREFIX: keyPrefix,
        ROOMS_JWT_SECRET: 'media-failover-web-secret-0123456789ab',
        ROOMS_GRPC_TOKEN: 'media-failover-web-grpc-token-0123456',
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: '0',
        ROOMS_GRPC_PORT: '0',
        ROOMS_MEDIA_EMBEDDED: 'false',
        ROOMS_MEDIA_URL: servers[0]!.url,
        ROOMS_MEDIA_SERVER_ID: servers[0]!.id,
        ROOMS_MEDIA_INTERNAL_TOKEN: CLUSTER_MEDIA_TOKEN,
        ROOMS_MEDIA_TIMEOUT_MS: '1500',
        ROOMS_LOG_LEVEL: 'silent',
        ROOMS_BCRYPT_COST: '4',
      }),
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await node?.close();
    await Promise.all(servers.map((s) => s.process.stop()));
    await deleteKeysWithPrefix(redisUrl, keyPrefix).catch(() => 0);
    await drop();
  });

  async function open(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    await page.goto(`${node.httpAddress}/`);
    return page;
  }

  async function signUp(page: Page, username: string): Promise<number> {
    await page.getByRole('button', { name: '没有账号？注册' }).click();
    await page.getByLabel('用户名').fill(username);
    await page.getByLabel('密码', { exact: true }).fill('secret123');
    await page.getByRole('button', { name: '注册并登录' }).click();
    const me = await page.locator('[data-test=me]').textContent();
    await page.locator('[data-test=ws-status].open').waitFor();
    return Number(/ID (\d+)/.exec(me ?? '')?.[1]);
  }

  const received = async (page: Page, from: number) =>
    (
      await page.evaluate(
        () => (globalThis as unknown as RoomsGlobal).rooms.room?.received() ?? Promise.resolve([]),
      )
    ).filter((r) => r.userId === from);

  /** True when `page`'s audio and video from `from` both grew over ~300 ms. */
  async function growing(page: Page, from: number): Promise<boolean> {
    const before = await received(page, from);
    await sleep(300);
    const now = await received(page, from);
    return ['audio', 'video'].every((kind) => {
      const was = before.find((r) => r.kind === kind)?.bytes ?? 0;
      const is = now.find((r) => r.kind === kind)?.bytes ?? 0;
      return is > was && was > 0;
    });
  }

  async function waitUntil(what: string, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
      await sleep(200);
    }
  }

  void it('both pages receive media again after a kill -9 of the meeting’s server', async () => {
    await reportingOutput(
      servers.map((s) => s.process),
      async () => {
        const pageA = await open();
        const idA = await signUp(pageA, 'fail_alice');
        const pageB = await open();
        const idB = await signUp(pageB, 'fail_bob');
        await pageA.getByLabel('会议标题').fill('切换');
        await pageA.locator('[data-test=create-meeting]').click();
        await pageA.waitForURL(/\/meeting\/\d{3}-\d{3}-\d{3}$/);
        const code = (await pageA.locator('[data-test=room-code]').textContent())!;
        await pageB.getByLabel('会议号').fill(code);
        await pageB.locator('[data-test=join-meeting]').click();
        await pageB.waitForURL(new RegExp(`/meeting/${code}$`));
        await waitUntil('B receives A', () => growing(pageB, idA));
        await waitUntil('A receives B', () => growing(pageA, idB));

        const room = `meeting:default:${code}`;
        const holder = (await Promise.all(servers.map(roomsOn))).findIndex((r) => r.includes(room));
        assert.ok(holder >= 0, 'one media server holds the meeting');
        const [dead, survivor] =
          holder === 0 ? [servers[0]!, servers[1]!] : [servers[1]!, servers[0]!];
        // Marks on the pages' globals: a reload would lose them.
        for (const page of [pageA, pageB]) {
          await page.evaluate(() => ((globalThis as { failoverMark?: number }).failoverMark = 1));
        }
        const killedAt = Date.now();
        dead.process.child.kill('SIGKILL');
        // The meeting's router is on the survivor, and both pages' media grows again there.
        await waitUntil('the meeting moved', async () => (await roomsOn(survivor)).includes(room));
        await Promise.all([
          waitUntil('B receives A again', () => growing(pageB, idA)),
          waitUntil('A receives B again', () => growing(pageA, idB)),
        ]);
        const gapMs = Date.now() - killedAt;
        process.stdout.write(`# media failover gap: ${gapMs} ms from kill -9 to media again\n`);
        for (const page of [pageA, pageB]) {
          const mark = await page.evaluate(
            () => (globalThis as { failoverMark?: number }).failoverMark,
          );
          assert.equal(mark, 1, 'the page was not reloaded');
          assert.ok(page.url().endsWith(`/meeting/${code}`));
          // What the tab keeps for a reload is the new router, not the dead server's.
          const kept = await page.evaluate((key) => {
            const storage = (
              globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } }
            ).sessionStorage;
            return JSON.parse(storage.getItem(key) ?? 'null') as { router_id?: string } | null;
          }, `rooms.meeting.${code}`);
          assert.equal(kept?.router_id, await routerOn(survivor, room));
        }
      },
    );
  });
});
