/**
 * The host's periodic work: node heartbeat, lease renewal, durable timers, the alarm
 * sweeper and idle unloading. Each loop never overlaps itself; stop() waits for them.
 */
import { routeKey } from './lease.js';
import type { CellHost } from './host.js';
import type { DueCursor } from './cell-store.js';

export interface BackgroundWork {
  stop(): Promise<void>;
}

export function startBackgroundWork(host: CellHost): BackgroundWork {
  const { config } = host;
  const renewEvery = Math.max(50, Math.floor(config.leaseTtlMs / 3));
  const every = loopOf(host);
  const loops = [
    every('heartbeat', renewEvery, () => heartbeat(host)),
    every('lease renewal', renewEvery, () => renewLeases(host)),
    every('timers', config.timerTickMs, () => fireDueTimers(host)),
    every('sweeper', config.sweepIntervalMs, () => sweepOrphanAlarms(host)),
    every('idle unload', Math.max(config.timerTickMs, Math.floor(config.idleAfterMs / 4)), () =>
      unloadIdle(host),
    ),
  ];
  return { stop: () => Promise.all(loops.map((l) => l.stop())).then(() => undefined) };
}

function heartbeat(host: CellHost): Promise<void> {
  return host.registerSelf();
}

/** Renews every loaded cell's lease (see ./lease-renewal.ts); a lost lease closes the cell. */
async function renewLeases(host: CellHost): Promise<void> {
  await Promise.all(host.loadedCells.map((cell) => host.leases.renew(cell)));
}

const firing = new WeakSet<object>();

/**
 * The seed's rule for workers: confirm the Redis lease is still ours, read the state,
 * verify again with the same token, then submit through the normal commit path (which
 * fences once more). The request id is the deadline, so a deadline fires at most once even
 * when two nodes race for it.
 */
async function fireDueTimers(host: CellHost): Promise<void> {
  const { lease, clock } = host.deps;
  const now = clock.nowMs();
  await Promise.all(
    host.loadedCells.map(async (cell) => {
      const deadline = cell.domain.nextDeadline(cell.currentState);
      if (deadline === null || deadline > now || cell.closed || firing.has(cell)) return;
      firing.add(cell);
      try {
        const route = routeKey(cell.key);
        const token = cell.leaseToken;
        if (!(await lease.verifyOwner(route, token))) return;
        const command = cell.domain.alarmCommand(cell.currentState, clock.nowMs());
        if (!command) return;
        if (!(await lease.verifyOwner(route, token))) return;
        host.metrics.timersFired.inc();
        await cell.submit(command, `alarm:${deadline}`);
      } catch (err) {
        host.logger.warn({ err, room: cell.key }, 'timer command failed');
      } finally {
        firing.delete(cell);
      }
    }),
  );
}

const SWEEP_PAGE = 100;
/** Where each host's next sweep starts: after the last due room its previous page saw. */
const sweepCursors = new WeakMap<CellHost, DueCursor>();

/**
 * Wakes rooms whose alarm is overdue and whose lease is free (their owner died). Pages
 * through the due rooms across sweeps: rooms whose alarm stays due under a live owner
 * must not hide the orphans behind them; a short page means the end, and the next sweep
 * starts from the oldest again.
 */
async function sweepOrphanAlarms(host: CellHost): Promise<void> {
  const { store, clock } = host.deps;
  const after = sweepCursors.get(host) ?? null;
  const due = await store.dueAlarms(clock.nowMs() - 2 * host.config.timerTickMs, SWEEP_PAGE, after);
  const last = due.at(-1);
  if (due.length === SWEEP_PAGE && last) {
    sweepCursors.set(host, { alarmMs: last.alarmMs, key: last.key });
  } else sweepCursors.delete(host);
  for (const { key, kind } of due) {
    if (host.loaded(key) || !host.isServing) continue;
    // ensureOwner inside activate only grants a free lease; a live owner keeps its room.
    await host.activate(kind, key).catch((err: unknown) => {
      host.logger.warn({ err, room: key }, 'sweeper could not activate room');
    });
  }
}

async function unloadIdle(host: CellHost): Promise<void> {
  const now = host.deps.clock.nowMs();
  const { idleAfterMs } = host.config;
  const idle = host.loadedCells.filter((cell) => {
    if (cell.busy || cell.closed || now - cell.lastActivityMs < idleAfterMs) return false;
    const deadline = cell.domain.nextDeadline(cell.currentState);
    return deadline === null || deadline > now + idleAfterMs;
  });
  await Promise.all(idle.map((cell) => host.deactivate(cell)));
}

function loopOf(host: CellHost) {
  return (name: string, ms: number, task: () => Promise<void>) => repeat(host, name, ms, task);
}

function repeat(
  host: CellHost,
  name: string,
  ms: number,
  task: () => Promise<void>,
): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = task()
      .catch((err: unknown) => host.logger.warn({ err }, `${name} failed`))
      .finally(() => {
        running = null;
      });
  }, ms);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
