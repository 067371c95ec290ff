/**
 * Post-commit reactions: what must happen outside the database because a batch committed
 * (a kicked member's media closed, an ended meeting's router closed, the members of a room
 * moved to another media server told to re-create their media). A room kind names them per
 * event (`RoomKind.reactionsTo`); the batch writes one `room_reactions` row for each in its
 * commit transaction, so a reaction exists exactly when its commit does.
 *
 * The owner carries a batch's reactions out at once, in order, right after COMMIT, and
 * deletes each row once done (the fast path). A row still there when it falls due (the
 * owner died between COMMIT and the reaction, or the reaction failed: the media server was
 * unreachable) is claimed by any node that has a handler for it and retried with backoff
 * until done, or until `maxAttempts`, when it is kept as `failed` for an operator. So a
 * node's death after COMMIT changes nothing but timing. Handlers must be idempotent: a
 * reaction may run more than once (a slow fast path and a relay's claim overlapping, a
 * relay dying after the work but before the delete).
 */
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { SweepJob } from '../shared/periodic-sweep.js';
import type { CommittedBatch } from './cell-events.js';
import type { CellKey } from './lease.js';

/** How long a fresh reaction is the owner's alone before a relay may take it. */
export const REACTION_GRACE_MS = 2_000;

/** Carries out one reaction; throws to have it retried. */
export type ReactionHandler = (
  key: CellKey,
  data: Readonly<Record<string, unknown>>,
) => Promise<void>;

/** A reaction a relay claimed: its own until `leaseMs` from the claim, unless settled. */
export interface ClaimedReaction {
  readonly reactionId: string;
  readonly key: CellKey;
  readonly roomVersion: number;
  readonly type: string;
  /** JSON of the reaction's data. */
  readonly data: string;
  /** Tries so far, this claim's included. */
  readonly attempts: number;
  readonly claimToken: string;
}

/** Port: the reactions' rows (the SQL adapter: src/adapters/sql/reaction-store.ts). */
export interface ReactionStore {
  /** Claims up to `limit` due pending reactions of `types`; each is due again `leaseMs` later. */
  claimDue(request: {
    readonly types: readonly string[];
    readonly nowMs: number;
    readonly limit: number;
    readonly leaseMs: number;
  }): Promise<ClaimedReaction[]>;
  /** Done: the rows go (a claimed one only while the claim is still `claimToken`'s). */
  done(reactionIds: readonly string[], claimToken?: string): Promise<void>;
  /** Not done: due again at `nextAttemptAtMs`, or kept as failed. Only under its claim. */
  retry(
    reaction: Pick<ClaimedReaction, 'reactionId' | 'claimToken'>,
    outcome: { readonly nextAttemptAtMs: number; readonly failed: boolean; readonly error: string },
    nowMs: number,
  ): Promise<void>;
}

export interface ReactorConfig {
  /** How often the relay looks for due reactions (default 1 s). */
  readonly pollMs?: number;
  /** Reactions claimed per look (default 50). */
  readonly batchSize?: number;
  /** How long a claim holds before another node may take the reaction (default 30 s). */
  readonly leaseMs?: number;
  /** Tries before a reaction is kept as failed (default 20: about 15 minutes of backoff). */
  readonly maxAttempts?: number;
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
}

export class Reactor extends SweepJob {
  readonly #inFlight = new Set<Promise<void>>();
  #stopped = false;

  constructor(
    readonly config: ReactorConfig,
    private readonly deps: {
      readonly store: ReactionStore;
      readonly clock: Clock;
      readonly logger: Logger;
      /** By reaction type: what this node can carry out. */
      readonly handlers: ReadonlyMap<string, ReactionHandler>;
    },
  ) {
    super({
      intervalMs: config.pollMs ?? 1_000,
      logger: deps.logger.child({ module: 'reactions' }),
      what: 'post-commit reactions',
    });
  }

  override get enabled(): boolean {
    return this.deps.handlers.size > 0;
  }

  /**
   * The fast path, on the node that committed: the batch's reactions in order, each row
   * deleted once done. One that fails or has no handler here stays for a relay.
   */
  onCommitted(batch: CommittedBatch): void {
    // A node shutting down starts nothing: the rows wait for a relay.
    if (this.#stopped) return;
    const mine = batch.reactions.filter((r) => this.deps.handlers.has(r.type));
    if (mine.length === 0) return;
    const run = (async () => {
      for (const r of mine) {
        try {
          await this.deps.handlers.get(r.type)!(batch.key, JSON.parse(r.data) as never);
          await this.deps.store.done([r.reactionId]);
        } catch (err) {
          this.logger.warn({ err, room: batch.key, reaction: r.type }, 'reaction failed; retried');
        }
      }
    })();
    this.#inFlight.add(run);
    void run.finally(() => this.#inFlight.delete(run));
  }

  /** Stops the relay and waits for the fast paths in flight. Idempotent. */
  override async stop(): Promise<void> {
    this.#stopped = true;
    await super.stop();
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /** One relay pass: claims the due reactions this node can carry out and runs them. */
  protected override async sweepOnce(): Promise<number> {
    const { store, clock } = this.deps;
    const claimed = await store.claimDue({
      types: [...this.deps.handlers.keys()],
      nowMs: clock.nowMs(),
      limit: this.config.batchSize ?? 50,
      leaseMs: this.config.leaseMs ?? 30_000,
    });
    // A room's reactions in their order; rooms side by side.
    const byRoom = new Map<string, ClaimedReaction[]>();
    for (const r of claimed) {
      const room = `${r.key.appCode}\n${r.key.roomId}`;
      byRoom.set(room, [...(byRoom.get(room) ?? []), r]);
    }
    const ran = await Promise.all(
      [...byRoom.values()].map(async (rows) => {
        let done = 0;
        for (const r of rows.sort((a, b) => a.roomVersion - b.roomVersion)) {
          if (await this.#runClaimed(r)) done++;
        }
        return done;
      }),
    );
    return ran.reduce((a, b) => a + b, 0);
  }

  async #runClaimed(r: ClaimedReaction): Promise<boolean> {
    const { store, clock, handlers } = this.deps;
    try {
      await handlers.get(r.type)!(r.key, JSON.parse(r.data) as never);
      await store.done([r.reactionId], r.claimToken);
      return true;
    } catch (err) {
      const failed = r.attempts >= (this.config.maxAttempts ?? 20);
      const base = this.config.retryBaseMs ?? 1_000;
      const wait = Math.min(this.config.retryMaxMs ?? 60_000, base * 2 ** (r.attempts - 1));
      const error = err instanceof Error ? err.message : String(err);
      this.logger.warn(
        { err, room: r.key, reaction: r.type, attempts: r.attempts, failed },
        failed ? 'reaction gave up' : 'reaction failed; retried',
      );
      await store
        .retry(r, { nextAttemptAtMs: clock.nowMs() + wait, failed, error }, clock.nowMs())
        .catch((e: unknown) => this.logger.warn({ err: e }, 'recording a failed reaction failed'));
      return false;
    }
  }
}
