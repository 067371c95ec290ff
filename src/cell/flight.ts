/**
 * One batch of a cell on its way through the store. Where the store pipelines, the next
 * batch is decided while this one's write is in the database: it starts from the state
 * this one will commit (`tip`), its fence expects this one's version, and it is applied
 * only after this one was. So it commits only if this one does. When a batch does not
 * commit, every batch behind it is doomed: it is not sent, or its fence refuses it, and
 * its commands are decided again from the committed state. A batch that failed decides
 * nothing again before the batch behind it has ended, so a doomed write can never find
 * the version it expects written by a new decision.
 */

/** Where a batch starts: the committed state, or the state the batch ahead will commit. */
export interface Tip<S> {
  readonly state: S;
  readonly version: number;
  readonly snapshotVersion: number;
  /** The length of the last snapshot's JSON (0: none): see ./snapshot-due.ts. */
  readonly snapshotBytes: number;
  /** False while the room has no row (its first batch inserts it). */
  readonly persisted: boolean;
}

export class Flight<S> {
  /** The batch ahead, still in the database when this one was launched. */
  readonly behind: Flight<S> | null;
  /** The batch launched behind this one, if any. */
  next: Flight<S> | null = null;
  /** The state this batch's decision leads to; set once decided with rows to write. */
  tip: Tip<S> | null = null;
  /** The request ids this batch decides: their copies wait for its answers. */
  readonly requestIds = new Set<string>();
  readonly #sent = deferred<void>();
  readonly #committed = deferred<boolean>();
  #failed = false;
  #isSent = false;
  #isDone = false;
  #done: Promise<void> = Promise.resolve();

  constructor(behind: Flight<S> | null) {
    this.behind = behind;
    if (behind) behind.next = this;
  }

  /** Runs the batch; `done` settles when every command of it is answered or put back. */
  start(run: () => Promise<void>): void {
    this.#done = run().finally(() => {
      this.#isDone = true;
      // A batch that ended without committing (closed cell, nothing to write) dooms the next.
      this.#committed.resolve(false);
    });
  }

  get done(): Promise<void> {
    return this.#done;
  }

  /** Resolves once the write is in the database or the batch has ended, whichever first. */
  sentOrDone(): Promise<void> {
    return Promise.race([this.#sent.promise, this.#done]);
  }

  /** Sent with rows to write, and not yet answered: the next batch may be decided behind it. */
  get inDatabase(): boolean {
    return this.#isSent && !this.#isDone && this.tip !== null;
  }

  /** True once this batch, or one ahead of it, did not commit. */
  get failed(): boolean {
    return this.#failed;
  }

  /** Resolves true once its first try committed and was applied, false once it did not. */
  get committed(): Promise<boolean> {
    return this.#committed.promise;
  }

  markSent(): void {
    this.#isSent = true;
    this.#sent.resolve();
  }

  markCommitted(): void {
    this.#committed.resolve(true);
  }

  /** Its first try did not commit: the batches behind it are doomed. */
  fail(): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#committed.resolve(false);
    this.next?.fail();
  }

  /** Before this batch decides again: the doomed batch behind it has ended. */
  async successorEnded(): Promise<void> {
    await this.next?.done;
  }
}

/** From rest, a queue this long is split in two batches, the second decided behind the first. */
const SPLIT_AT = 8;

/**
 * Takes the next batch off `queue`, or null when there is none to launch now. Behind a
 * batch in flight: never a batch with work inside the transaction, and never a copy of a
 * request that batch decides (it waits in the queue for the first answer). From rest,
 * where the store pipelines (`split`), half of a long queue, so the other half can be
 * decided meanwhile.
 */
export function takeBatch<P extends { readonly requestId: string }>(
  queue: P[],
  ahead: Flight<unknown> | null,
  limits: { maxBatch: number; split: boolean; inTransaction: (p: P) => boolean },
): P[] | null {
  const { maxBatch, split, inTransaction } = limits;
  if (queue.length === 0) return null;
  if (!ahead) {
    let n = Math.min(queue.length, maxBatch);
    if (split && n >= SPLIT_AT && !queue.slice(0, n).some(inTransaction)) n = Math.ceil(n / 2);
    return queue.splice(0, n);
  }
  if (ahead.failed) return null;
  const batch: P[] = [];
  const waiting: P[] = [];
  const taken = queue.splice(0, maxBatch);
  for (const p of taken) (ahead.requestIds.has(p.requestId) ? waiting : batch).push(p);
  if (batch.some(inTransaction)) {
    queue.unshift(...taken);
    return null;
  }
  queue.unshift(...waiting);
  return batch.length > 0 ? batch : null;
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
