/**
 * SQLite's WAL checkpoints off the event loop. A checkpoint copies the WAL's pages into the
 * database file and syncs it; by default it runs inside whichever commit takes the WAL past
 * 1,000 pages, on the event loop, and every request in flight waits. Measured on the
 * meetings bench: 21 of 808 commits took over 1 ms (5 ms on average), 60% of all commit
 * time. Here a worker thread with a connection of its own runs PASSIVE checkpoints (they
 * never block the writer) every `everyMs`, and the node's connection checkpoints itself only
 * past `fallbackPages`: the WAL stays bounded while the worker lags or if it dies, and a
 * checkpoint the node's connection still runs finds most pages copied already.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

export const CHECKPOINT_EVERY_MS = 100;
/** 10× SQLite's default: about 40 MiB of WAL at 4 KiB pages. */
export const FALLBACK_CHECKPOINT_PAGES = 10_000;

/**
 * The worker's code, plain JavaScript (a worker thread does not inherit the TypeScript
 * loader): open the file, checkpoint on a timer, close when asked.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or failing: the next tick tries again, and the node's own fallback bounds the WAL.
  }
}, workerData.everyMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Stops the worker and closes its connection; idempotent. */
  close(): Promise<void>;
}

/** Starts checkpointing `file` off the event loop for the WAL connection `database`. */
export function checkpointOffLoop(
  database: SqliteDatabase.Database,
  file: string,
  options: { everyMs?: number; fallbackPages?: number } = {},
): Checkpointer {
  database.pragma(`wal_autocheckpoint = ${options.fallbackPages ?? FALLBACK_CHECKPOINT_PAGES}`);
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      file,
      everyMs: options.everyMs ?? CHECKPOINT_EVERY_MS,
    },
  });
  // Never keeps the process alive, and a worker that failed leaves the fallback in charge.
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('error', () => undefined);
  let closed: Promise<void> | undefined;
  return {
    close: () =>
      (closed ??= (async () => {
        worker.postMessage('close');
        const timer = setTimeout(() => void worker.terminate(), 5_000);
        await exited;
        clearTimeout(timer);
      })()),
  };
}
