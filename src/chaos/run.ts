/**
 * One chaos run: the cluster, the webhook receiver, the seeded workload and fault plan for
 * `durationMs`, then the settle (every event delivered, no timer due), the drain of the
 * nodes, the rows read from MySQL, the checks and the report.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runChecks } from './check/index.js';
import type { Observed, Rows } from './check/types.js';
import { ChaosClient, newGrpcClient, type ClientContext } from './client.js';
import { ADMIN_TOKEN, APP, LEASE_TTL_MS, startChaosCluster, type ChaosCluster } from './cluster.js';
import { FaultLog, injectFaults, planFaults } from './faults.js';
import { faultGaps, summarizeGaps } from './gaps.js';
import { History } from './history.js';
import { Prng } from './prng.js';
import { readRows, unsettled } from './read-rows.js';
import { countCommands, countFaults, writeReport, type ChaosReport } from './report.js';
import { RtcFeed } from './rtc.js';
import { startWebhookReceiver } from './webhook-receiver.js';
import {
  GIFTS,
  INITIAL_BALANCE,
  VOICE_USERS,
  meetingLoop,
  topUpLoop,
  voiceRoomLoop,
  type Loop,
} from './workload.js';

export interface ChaosOptions {
  readonly seed: number;
  readonly durationMs: number;
  /** Where report.json, report.md and the nodes' logs go. */
  readonly outDir: string;
  readonly voiceRooms?: number;
  readonly meetings?: number;
  readonly log?: (line: string) => void;
}

export interface ChaosOutcome {
  readonly report: ChaosReport;
  readonly markdown: string;
  readonly rows: Rows;
  readonly observed: Observed;
}

/** The gap targets: every fault within the lease TTL + 1 s, a FLUSHALL within 0.5 s. */
export const GAP_TARGETS_MS: Readonly<Record<string, number>> = {
  'kill-restart': LEASE_TTL_MS + 1_000,
  pause: LEASE_TTL_MS + 1_000,
  'redis-restart': LEASE_TTL_MS + 1_000,
  'mariadb-restart': LEASE_TTL_MS + 1_000,
  'redis-flushall': 500,
};
const WEBHOOK_FAIL_SHARE = 0.15;
const SETTLE_TIMEOUT_MS = 60_000;

async function admin(
  cluster: ChaosCluster,
  method: string,
  path: string,
  body: unknown,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const node = cluster.nodes[attempt % cluster.nodes.length]!;
    const res = await fetch(`${node.http}/api/v1/admin${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-admin-token': ADMIN_TOKEN },
      body: JSON.stringify(body),
    }).catch(() => null);
    if (res?.ok) return;
    if (attempt >= 10) throw new Error(`admin ${method} ${path}: ${res?.status ?? 'no answer'}`);
    await sleep(200);
  }
}

/** Waits until every committed event is delivered and no timer is due soon. */
async function settle(dbUrl: string, log: (line: string) => void): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let quiet = 0;
  while (Date.now() < deadline) {
    const state = await unsettled(dbUrl, 20_000).catch(() => null);
    quiet = state && state.outbox === 0 && state.timers === 0 ? quiet + 1 : 0;
    if (quiet >= 5) return;
    await sleep(200);
  }
  log('chaos: the cluster did not settle in time (undelivered events or timers due remain)');
}

export async function runChaos(options: ChaosOptions): Promise<ChaosOutcome> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const root = new Prng(options.seed);
  const receiver = await startWebhookReceiver(root.fork('webhook'), WEBHOOK_FAIL_SHARE);
  log(`chaos: seed ${options.seed}, starting MariaDB, Redis and 3 nodes`);
  const cluster = await startChaosCluster();
  const grpc = newGrpcClient();
  try {
    await admin(cluster, 'PUT', `/apps/${APP}/webhook`, {
      url: receiver.url,
      secret: 'chaos-webhook-secret',
    });
    for (const g of GIFTS)
      await admin(cluster, 'PUT', `/gifts/${g.gift_id}`, { app_code: APP, ...g });
    const history = new History();
    const faults = new FaultLog();
    let running = true;
    const ctx: ClientContext = { nodes: cluster.nodes, history, grpc, running: () => running };
    const setup = new ChaosClient('setup', ctx, root.fork('setup'));
    for (const user of VOICE_USERS) await setup.topUp(user, INITIAL_BALANCE, `setup-topup-${user}`);

    const resends = new Set<Promise<void>>();
    const loopOf = (name: string): Loop => {
      const prng = root.fork(name);
      return {
        client: new ChaosClient(name, ctx, prng.fork('client')),
        prng,
        running: ctx.running,
        resends,
      };
    };
    const feeds: RtcFeed[] = [];
    const work: Promise<void>[] = [];
    for (let i = 1; i <= (options.voiceRooms ?? 4); i++) {
      const loop = loopOf(`voice${i}`);
      const feed = new RtcFeed(loop.client, loop.prng.fork('rtc'), faults);
      feeds.push(feed);
      work.push(voiceRoomLoop(loop, feed, i));
    }
    for (let i = 1; i <= (options.meetings ?? 2); i++)
      work.push(meetingLoop(loopOf(`meeting${i}`), i));
    work.push(topUpLoop(loopOf('topup')));

    const plan = planFaults(root.fork('faults'), options.durationMs);
    const startMs = Date.now();
    log(
      `chaos: workload for ${options.durationMs / 1000} s, ${plan.length} process faults planned`,
    );
    const rooms = () =>
      history.requests.flatMap((r) => (r.room !== null && r.api !== 'rtc' ? [r.room] : []));
    const injector = injectFaults(plan, cluster, faults, startMs, () => [...new Set(rooms())]);
    const stop = sleep(options.durationMs).then(() => (running = false));
    const settled = await Promise.allSettled([...work, injector, stop]);
    running = false;
    for (const feed of feeds) await feed.settle();
    while (resends.size > 0) await Promise.all([...resends]);
    const endMs = Date.now();
    const errors = settled.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
    for (const error of errors) log(`chaos: ${error}`);

    log('chaos: workload over; waiting for every event to be delivered');
    await settle(cluster.dbUrl, log);
    await cluster.stopNodes();
    const rows = await readRows(cluster.dbUrl);
    const observed: Observed = { requests: history.requests, deliveries: [...receiver.deliveries] };
    const invariants = runChecks(rows, observed);
    const gaps = faultGaps(faults.faults, history.requests, endMs);
    const report: ChaosReport = {
      seed: options.seed,
      durationMs: options.durationMs,
      startedAt: new Date(startMs).toISOString(),
      faults: countFaults(faults.faults),
      commands: countCommands(history.requests),
      gaps: summarizeGaps(gaps, GAP_TARGETS_MS),
      faultGaps: gaps,
      invariants,
      errors,
      pass: errors.length === 0 && invariants.every((r) => r.pass),
    };
    const markdown = await writeReport(report, options.outDir);
    await writeFile(path.join(options.outDir, 'history.json'), JSON.stringify(observed));
    await cluster.saveLogs(path.join(options.outDir, 'nodes'));
    return { report, markdown, rows, observed };
  } catch (error) {
    await cluster.saveLogs(path.join(options.outDir, 'nodes')).catch(() => undefined);
    throw error;
  } finally {
    grpc.close();
    await cluster.stopNodes().catch(() => undefined);
    await cluster.stopBackends();
    await receiver.close();
  }
}
