/**
 * What a dead node's sockets held on the media servers. A node process that dies (kill -9, a
 * lost machine) cannot release its sockets' transports, producers and consumers; whether
 * their users come back through another node or never, those would stay until the member
 * leaves or the room ends. Every node process is a holder ({@link MediaHolders}) that beats
 * in Redis and lists the (room, user) pairs its sockets made media in; the records carry
 * their holder. Every node looks for holders that stopped beating every `intervalMs`; one
 * claims each, releases the records that holder made (closed on the room's media server,
 * forgotten, producers announced closed to the room) and removes it from the directory. What
 * the users made since through another node is theirs and stays.
 */
import type { Logger } from 'pino';
import type { CellKey } from '../../cell/lease.js';
import type { MediaRoomKind } from '../../media-cluster/media-servers.js';
import { PeriodicSweep } from '../../shared/periodic-sweep.js';
import type { MediaHolders } from './ports.js';

/** Releases what `holder` made for the user in the room (the kind's media handlers). */
export type HeldMediaRelease = (
  key: CellKey,
  userId: string,
  server: string | null,
  holder: string,
) => Promise<void>;

export interface OrphanMediaDeps {
  readonly holders: MediaHolders;
  readonly release: Readonly<Partial<Record<MediaRoomKind, HeldMediaRelease>>>;
  readonly intervalMs: number;
  readonly logger: Logger;
}

export class OrphanMediaSweep {
  readonly #sweep: PeriodicSweep;
  readonly #logger: Logger;

  constructor(private readonly deps: OrphanMediaDeps) {
    this.#logger = deps.logger.child({ module: 'orphan-media' });
    this.#sweep = new PeriodicSweep({
      intervalMs: deps.intervalMs,
      run: () => this.run(),
      logger: this.#logger,
      what: 'releasing the media of dead nodes',
    });
  }

  start(): void {
    this.#sweep.start();
  }

  stop(): Promise<void> {
    return this.#sweep.stop();
  }

  /** One pass: releases what every dead holder held; resolves with how many users' media. */
  async run(): Promise<number> {
    const { holders, release } = this.deps;
    let released = 0;
    for (const holder of await holders.dead()) {
      if (this.#sweep.isStopped || !(await holders.claim(holder))) continue;
      let failed = 0;
      const held = await holders.heldBy(holder);
      for (const { kind, key, userId, server } of held) {
        try {
          await release[kind]?.(key, userId, server, holder);
          released += 1;
        } catch (err) {
          failed += 1;
          this.#logger.warn({ err, holder, room: key, userId }, 'releasing held media failed');
        }
      }
      // A failure keeps the holder: the next claim (after this one lapses) tries again.
      if (failed === 0) await holders.forget(holder);
      this.#logger.info({ holder, users: held.length, failed }, 'a dead node’s media released');
    }
    return released;
  }
}
