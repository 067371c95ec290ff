/**
 * The web client when the node behind its socket dies: two node processes (MariaDB + Redis)
 * sharing one standalone media server process, so that killing a node leaves the media
 * alive; a TCP balancer in front of them (../testing/tcp-balancer.ts), one address per
 * page: A's prefers node 0, the others node 1, each falling back to the other node once the
 * balancer holds its first down (its health check, driven by the test). A's rooms live on
 * node 0; the node killed with SIGKILL is the one of the other page's socket.
 *
 * Meeting: B's node dies; B's page shows that it is reconnecting (its new connections fail
 * until the balancer marks the node down) and A sends a chat line meanwhile; then B's page
 * recovers by itself on node 0, with no reload: the socket follows the meeting again, the
 * chat line is there, B's media is made again on the new socket (B's old producers, left on
 * the media server by the dead node, are closed) and each page receives the other's audio
 * and video again (inbound-rtp bytes growing).
 *
 * Voice room: node 1 restarted and back in the balancer, C (on node 1) listens to A on a
 * seat; C's node dies, A locks a seat meanwhile; C's page recovers by itself: resubscribed
 * with the replay of what it missed (the lock, without a refetch), and it hears A again.
 *
 * Screenshots: test-results/web-cluster-*.png.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import type { Browser, Page } from 'playwright-core';
import { browserSkipReason, launchChromium } from '../media-server/testing/chromium.js';
import { mediaSkipReason } from '../media-server/testing/harness.js';
import { mediaRoomOf } from '../media-cluster/media-servers.js';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  freePort,
  testKeyPrefix,
  testRedisUrl,
  type TestDatabase,
} from '../testing/backends.js';
import {
  ServerProcess,
  TEST_TIMEOUT_MS,
  reportingOutput,
  waitForHealthy,
} from '../testing/server-process.js';
import { TcpBalancer } from '../testing/tcp-balancer.js';
import {
  buildWebClient,
  hearsVoiceOf,
  PAGE_WAIT_MS,
  receivesMediaOf,
  sawReconnecting,
  signUp,
  watchReconnecting,
  type RoomsGlobal,
} from './testing/web-client-pages.js';

const skip = (await clusterSkipReason()) || mediaSkipReason() || browserSkipReason();
const RESULTS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-results');
const MEDIA_TOKEN = 'web-cluster-media-token-0123456789';
/** Setting up or tearing down that takes longer has hung: a failure, not a stalled run. */
const HOOK_LIMIT = { timeout: TEST_TIMEOUT_MS * 2 };

describe(
  'the web client when its node dies (cluster)',
  { skip, timeout: TEST_TIMEOUT_MS * 3 },
  () => {
    let database: TestDatabase;
    let media: ServerProcess;
    let balancer: TcpBalancer;
    let browser: Browser;
    const nodes: {
      name: string;
      env: Record<string, string>;
      process: ServerProcess;
      http: string;
      port: number;
    }[] = [];
    const pages: Partial<Record<'A' | 'B' | 'C', Page>> = {};
    const ids: Partial<Record<'A' | 'B' | 'C', number>> = {};
    let frontA = '';
    let frontOthers = '';
    const keyPrefix = testKeyPrefix();
    const logs: string[] = [];
    const processes = () => [media, ...nodes.map((n) => n.process)];
    let mediaUrl = '';

    before(async () => {
      buildWebClient();
      database = await createTestDatabase();
      const mediaPort = await freePort();
      mediaUrl = `http://127.0.0.1:${mediaPort}`;
      media = new ServerProcess(
        'media',
        {
          ROOMS_MEDIA_PORT: String(mediaPort),
          ROOMS_MEDIA_INTERNAL_TOKEN: MEDIA_TOKEN,
          ROOMS_MEDIA_WORKERS: '1',
          ROOMS_LOG_LEVEL: 'warn',
        },
        'src/media-server/main.ts',
      );
      for (const name of ['wc-0', 'wc-1']) {
        const [port, grpcPort] = [await freePort(), await freePort()];
        const env = {
          ROOMS_NODE_ID: name,
          ROOMS_DB_URL: database.url,
          ROOMS_DB_POOL_SIZE: '4',
          ROOMS_REDIS_URL: testRedisUrl(),
          ROOMS_KEY_PREFIX: keyPrefix,
          ROOMS_HTTP_HOST: '127.0.0.1',
          ROOMS_HTTP_PORT: String(port),
          ROOMS_GRPC_HOST: '127.0.0.1',
          ROOMS_GRPC_PORT: String(grpcPort),
          ROOMS_GRPC_TOKEN: 'web-cluster-grpc-token-0123456789abcdef',
          ROOMS_ADVERTISE_ADDR: `127.0.0.1:${grpcPort}`,
          ROOMS_LEASE_TTL_MS: '2000',
          ROOMS_JWT_SECRET: 'web-cluster-secret-0123456789abcdefghij',
          ROOMS_BCRYPT_COST: '4',
          ROOMS_LOG_LEVEL: 'warn',
          ROOMS_MEDIA_EMBEDDED: 'false',
          ROOMS_MEDIA_URL: `http://127.0.0.1:${mediaPort}`,
          ROOMS_MEDIA_INTERNAL_TOKEN: MEDIA_TOKEN,
        };
        nodes.push({
          name,
          env,
          process: new ServerProcess(name, env),
          http: `http://127.0.0.1:${port}`,
          port,
        });
      }
      await reportingOutput(processes(), async () => {
        await waitForHealthy(media, `http://127.0.0.1:${mediaPort}`, 60_000);
        await Promise.all(nodes.map((n) => waitForHealthy(n.process, n.http, 60_000)));
      });
      balancer = new TcpBalancer(nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
      frontA = await balancer.front([0, 1]);
      frontOthers = await balancer.front([1, 0]);
      browser = await launchChromium();
      await mkdir(RESULTS, { recursive: true });
    }, HOOK_LIMIT);
    after(async () => {
      await browser?.close();
      await balancer?.close();
      await Promise.all(nodes.map((n) => n.process.stop()));
      await media?.stop();
      await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
      await database?.drop();
    }, HOOK_LIMIT);

    const shot = (page: Page, name: string) =>
      page.screenshot({ path: path.join(RESULTS, `web-cluster-${name}.png`), fullPage: true });

    /**
     * A voice room's media seen from outside the listener's page: what the speaker's page
     * says of its audio, and the producers the media server holds for the room.
     */
    const voiceMediaOf = (roomId: string) => async () => {
      const speaker = await pages.A?.evaluate(() => globalThis.rooms.room?.audio?.());
      const room = mediaRoomOf({ appCode: 'default', roomId }, 'voice_room');
      const answer = await fetch(`${mediaUrl}/internal/v1/rooms/${room}/producers`, {
        headers: { 'x-internal-token': MEDIA_TOKEN },
      }).then(
        (r) => r.text(),
        (e: Error) => e.message,
      );
      return `speaker's audio ${JSON.stringify(speaker)}; media server: ${answer}`;
    };

    async function open(name: 'A' | 'B' | 'C', base: string): Promise<Page> {
      const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
      const page = await context.newPage();
      page.setDefaultTimeout(PAGE_WAIT_MS);
      page.on('pageerror', (e) => logs.push(`${name} page error: ${e.message}`));
      page.on('console', (m) => logs.push(`${name} ${m.type()}: ${m.text()}`));
      await page.goto(`${base}/`);
      pages[name] = page;
      return page;
    }

    /** Each open page saved, and what they logged (for a failure's report). */
    const describePages = async () => {
      for (const [name, page] of Object.entries(pages))
        await shot(page, `failed-${name.toLowerCase()}`).catch(() => undefined);
      return logs.join('\n');
    };
    /** Runs a scenario; on a failure the pages are saved and their console printed. */
    const scenario = (run: () => Promise<void>) => () =>
      reportingOutput(processes(), async () => {
        try {
          await run();
        } catch (error) {
          process.stderr.write(`${await describePages()}\n`);
          throw error;
        }
      });

    /** Kills node 1 (SIGKILL) with `page`'s socket on it; the page says it is reconnecting. */
    async function killNodeOf(page: Page, name: string): Promise<void> {
      await watchReconnecting(page);
      await page.evaluate('globalThis.sameDocument = true'); // gone if the page reloads
      const killed = nodes[1]!;
      killed.process.child.kill('SIGKILL');
      await killed.process.exited;
      await page.locator('[data-test=reconnecting]').waitFor();
      await page.locator('[data-test=ws-status].reconnecting').waitFor();
      await shot(page, `${name}-reconnecting`);
    }

    /** The balancer notices; the page recovers on node 0 by itself, without a reload. */
    async function recoversOnNode0(page: Page): Promise<void> {
      balancer.markDown(1);
      await page.waitForFunction(
        () => (globalThis as unknown as RoomsGlobal).rooms.realtime.opens >= 2,
      );
      await page.locator('[data-test=reconnecting]').waitFor({ state: 'detached' });
      assert.equal(await sawReconnecting(page), true);
      assert.equal(await page.evaluate('globalThis.sameDocument'), true, 'no reload');
    }

    const ownerOf = async (code: string) => {
      const redis = new Redis(testRedisUrl());
      try {
        return (await redis.get(`${keyPrefix}lease:default\u0000${code}`))?.split('\n')[0];
      } finally {
        redis.disconnect();
      }
    };

    it(
      'a meeting: B’s page recovers by itself after B’s node is killed (socket, chat, media)',
      scenario(async () => {
        const pageA = await open('A', frontA);
        const pageB = await open('B', frontOthers);
        const idA = (ids.A = await signUp(pageA, 'alice_cluster', '爱丽丝'));
        const idB = (ids.B = await signUp(pageB, 'bob_cluster'));

        await pageA.getByLabel('会议标题').fill('集群会议');
        await pageA.locator('[data-test=create-meeting]').click();
        await pageA.waitForURL(/\/meeting\/\d{3}-\d{3}-\d{3}$/);
        const code = (await pageA.locator('[data-test=room-code]').textContent())!;
        // The scenario kills only the node of B's socket: the meeting lives on A's.
        assert.equal(await ownerOf(code), 'wc-0', 'the meeting is owned by node 0');
        await pageB.getByLabel('会议号').fill(code);
        await pageB.locator('[data-test=join-meeting]').click();
        await pageB.waitForURL(/\/meeting\/\d{3}-\d{3}-\d{3}$/);
        await receivesMediaOf(pageB, idA, describePages);
        await receivesMediaOf(pageA, idB, describePages);
        await shot(pageB, 'meeting-before');

        await killNodeOf(pageB, 'meeting');
        // A chat line while B is away.
        await pageA.getByLabel('消息').fill('sent during the drop');
        await pageA.locator('[data-test=chat-send]').click();
        await pageA.locator('[data-test=chat]', { hasText: 'sent during the drop' }).waitFor();

        await recoversOnNode0(pageB);
        const line = pageB.locator('[data-test=chat] li', { hasText: 'sent during the drop' });
        assert.match(await line.innerText(), /^爱丽丝 · /);
        await receivesMediaOf(pageB, idA, describePages);
        await receivesMediaOf(pageA, idB, describePages);
        // One audio and one video of B on A's page: the old ones were closed.
        const ofB = (
          await pageA.evaluate(() => (globalThis as unknown as RoomsGlobal).rooms.room!.received())
        ).filter((r) => r.userId === idB);
        assert.deepEqual(ofB.map((r) => r.kind).sort(), ['audio', 'video']);
        assert.equal(new URL(pageB.url()).pathname, `/meeting/${code}`);
        await shot(pageB, 'meeting-recovered-b');
        await shot(pageA, 'meeting-recovered-a');
        assert.deepEqual(
          logs.filter((l) => l.includes('page error')),
          [],
        );
      }),
    );

    it(
      'a voice room: C’s page recovers by itself after C’s node is killed (replay, audio)',
      scenario(async () => {
        const pageA = pages.A!;
        const idA = ids.A!;
        // Node 1 again, back in the balancer: C's new page gets its socket there.
        const restarted = nodes[1]!;
        restarted.process = new ServerProcess(restarted.name, restarted.env);
        await waitForHealthy(restarted.process, restarted.http, 60_000);
        balancer.markUp(1);

        await pageA.locator('[data-test=leave]').click();
        await pageA.getByLabel('房间标题').fill('集群语音');
        await pageA.locator('[data-test=create-room]').click();
        await pageA.waitForURL(/\/voice\/vr_[\w-]+$/);
        const roomId = decodeURIComponent(new URL(pageA.url()).pathname.split('/')[2]!);
        assert.equal(await ownerOf(roomId), 'wc-0', 'the room is owned by node 0');
        await pageA.locator('[data-test=take-seat]').first().click();
        await pageA
          .locator(`[data-test=seat][data-user="${idA}"][data-state=publishing]`)
          .waitFor();

        const pageC = await open('C', frontOthers);
        await signUp(pageC, 'carol_cluster');
        const row = pageC.locator('[data-test=voice-rooms] li', { hasText: '集群语音' });
        await row.locator('[data-test=owner]', { hasText: '爱丽丝' }).waitFor();
        await row.getByRole('button').click();
        await pageC
          .locator(`[data-test=seat][data-user="${idA}"]`, { hasText: '爱丽丝' })
          .waitFor();
        await hearsVoiceOf(pageC, idA, voiceMediaOf(roomId));

        await killNodeOf(pageC, 'voice');
        // A locks the third seat while C is away.
        await pageA.locator('[data-test=seat]').nth(2).locator('[data-test=lock-seat]').click();
        await pageA
          .locator('[data-test=seat]')
          .nth(2)
          .and(pageA.locator('[data-state=locked]'))
          .waitFor();

        await recoversOnNode0(pageC);
        await pageC
          .locator('[data-test=seat]')
          .nth(2)
          .and(pageC.locator('[data-state=locked]'))
          .waitFor();
        const refetches = await pageC.evaluate(() =>
          (
            globalThis as unknown as { rooms: { room: { refetches(): number } } }
          ).rooms.room.refetches(),
        );
        assert.equal(refetches, 0, 'the replay brought the lock: no refetch');
        await hearsVoiceOf(pageC, idA, voiceMediaOf(roomId));
        await shot(pageC, 'voice-recovered-c');
        assert.deepEqual(
          logs.filter((l) => l.includes('page error')),
          [],
        );
      }),
    );
  },
);
