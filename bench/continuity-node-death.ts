/**
 * bench:continuity's third figure: a page's node killed with SIGKILL behind a balancer, until
 * the page hears the host again. Two node processes (MariaDB and Redis) share one standalone
 * media server process, behind a TCP balancer (src/testing/tcp-balancer.ts) that sends a
 * refused connection to the next node at once (nginx's `proxy_next_upstream error`): host A's
 * page prefers node 0, which owns the meeting; listener B's prefers node 1. Each round kills
 * node 1 with B's socket on it and times, from the kill, until A's audio grows again in B's
 * page (its socket back on node 0, the meeting followed again, its media made again); then
 * node 1 restarts and B's socket goes back to it for the next round.
 */
import type { Browser, Page } from 'playwright-core';
import { setTimeout as sleep } from 'node:timers/promises';
import { launchChromium } from '../src/media-server/testing/chromium.js';
import { receivesMediaOf, signUp } from '../src/main/testing/web-client-pages.js';
import { freePort } from '../src/testing/backends.js';
import { ServerProcess, waitForHealthy } from '../src/testing/server-process.js';
import { TcpBalancer } from '../src/testing/tcp-balancer.js';
import { startBenchCluster, type BenchNode } from './cluster-nodes.js';

const MEDIA_TOKEN = 'bench-continuity-media-token-0123';

/**
 * Runs in a page (a string: the bench's transpiler would wrap named functions in helpers the
 * page lacks): optionally drops its socket first, then reads its media figures every 10 ms
 * until audio of `from` grows on a socket opened after the `opens`-th (by default, the one
 * open now); true then, false after 30 s.
 */
export const hearsAgain = (
  from: number,
  options: { opens?: number; drop?: boolean } = {},
) => `(async () => {
  const rooms = globalThis.rooms;
  const opens = ${options.opens ?? 'rooms.realtime.opens'};
  if (${options.drop === true}) rooms.realtime.drop();
  const t0 = performance.now();
  let last = -1;
  while (performance.now() - t0 < 30000) {
    if (rooms.realtime.opens > opens && rooms.room && rooms.room.kind === 'meeting') {
      const audio = (await rooms.room.received()).find((r) => r.userId === ${from} && r.kind === 'audio');
      const bytes = audio ? audio.bytes : 0;
      if (last > 0 && bytes > last) return true;
      last = bytes;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
})()`;

const opensOf = (page: Page) => page.evaluate<number>('globalThis.rooms.realtime.opens');

/** The recovery time of each of `rounds` kills, in milliseconds. */
export async function nodeDeathRecovery(rounds: number): Promise<number[]> {
  const mediaPort = await freePort();
  const media = new ServerProcess(
    'media',
    {
      ROOMS_MEDIA_PORT: String(mediaPort),
      ROOMS_MEDIA_INTERNAL_TOKEN: MEDIA_TOKEN,
      ROOMS_MEDIA_WORKERS: '1',
      ROOMS_LOG_LEVEL: 'warn',
    },
    'src/media-server/main.ts',
  );
  await waitForHealthy(media, `http://127.0.0.1:${mediaPort}`, 60_000);
  const cluster = await startBenchCluster(['cb-0', 'cb-1'], {
    ROOMS_BCRYPT_COST: '4',
    ROOMS_MEDIA_URL: `http://127.0.0.1:${mediaPort}`,
    ROOMS_MEDIA_INTERNAL_TOKEN: MEDIA_TOKEN,
  }).catch(async (error: unknown) => {
    await media.stop();
    throw error;
  });
  const { nodes } = cluster;
  const portOf = (node: BenchNode) => Number(new URL(node.http).port);
  let browser: Browser | undefined;
  const balancer = new TcpBalancer(
    nodes.map((n) => ({ host: '127.0.0.1', port: portOf(n) })),
    { redispatch: true },
  );
  try {
    const frontA = await balancer.front([0, 1]);
    const frontB = await balancer.front([1, 0]);
    browser = await launchChromium();
    const open = async (base: string) => {
      const page = await (await browser!.newContext()).newPage();
      await page.goto(`${base}/`);
      return page;
    };
    const a = await open(frontA);
    const idA = await signUp(a, 'bench_death_host');
    await a.getByLabel('会议标题').fill('continuity');
    await a.locator('[data-test=create-meeting]').click();
    await a.waitForURL(/\/meeting\/\d{3}-\d{3}-\d{3}$/);
    const code = (await a.locator('[data-test=room-code]').textContent())!;
    const b = await open(frontB);
    await signUp(b, 'bench_death_guest');
    await b.getByLabel('会议号').fill(code);
    await b.locator('[data-test=join-meeting]').click();
    await receivesMediaOf(b, idA, () => Promise.resolve('B joins'));

    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const opens = await opensOf(b);
      const killed = nodes[1]!;
      const t0 = performance.now();
      killed.process.child.kill('SIGKILL');
      if (!(await b.evaluate(hearsAgain(idA, { opens })))) {
        throw new Error(`kill ${round + 1}: no audio of A in 30 s`);
      }
      times.push(performance.now() - t0);
      console.log(`node killed ${round + 1}: ${times.at(-1)!.toFixed(0)} ms`);
      await killed.process.exited;
      if (round === rounds - 1) break;
      // Node 1 back; B's socket goes back to it (a drop: the front prefers node 1 again).
      await cluster.restart(killed);
      balancer.markUp(1);
      const before = await opensOf(b);
      await b.evaluate('globalThis.rooms.realtime.drop()');
      if (!(await b.evaluate(hearsAgain(idA, { opens: before }))))
        throw new Error('B not back on node 1');
      await sleep(1_000);
    }
    return times;
  } finally {
    await browser?.close();
    await balancer.close();
    await cluster.close();
    await media.stop();
  }
}
