/**
 * What the media signalling (./media-handlers.ts) does with a resource it just made on the
 * media server: record it (and this process as a holder of the user's media in the room),
 * then check the caller again; or, for a call refused after all, close and forget it.
 */
import type { Logger } from 'pino';
import type { CellKey } from '../../cell/lease.js';
import type { MediaKind } from '../../media-cluster/media-orchestrator.js';
import type {
  MediaHolders,
  MediaResourceIds,
  ProducerSource,
  RoomMediaRules,
  RoomMediaState,
} from './ports.js';

export interface KeepDeps {
  readonly rules: RoomMediaRules;
  readonly state: RoomMediaState;
  readonly holders?: MediaHolders;
  readonly logger: Logger;
}

/**
 * Records what a creation made, then asks the kind's rules again whether the caller may
 * still use media in the room (and, for a producer, produce `kind`): a kick, a leave or a
 * lost seat decided meanwhile, on any node, whose release may have read the records before
 * this one, closes it again and forgets it, and the caller hears the rules' refusal.
 */
export async function keepMade(
  deps: KeepDeps,
  room: { key: CellKey; mediaServer: string | null },
  userId: string,
  write: () => Promise<void>,
  ids: MediaResourceIds,
  close: () => Promise<void>,
  produced?: { kind: MediaKind; source: ProducerSource },
): Promise<void> {
  const { key } = room;
  const { rules } = deps;
  await record(deps, write, close, room, userId);
  try {
    await rules.access(key.appCode, key.roomId, userId);
    if (produced) {
      await rules.mayProduce(key.appCode, key.roomId, userId, produced.kind, produced.source);
    }
  } catch (error) {
    await unmake(deps, key, userId, ids, close);
    throw error;
  }
}

/** Closes a resource made for a call that is refused after all, and forgets its record. */
export async function unmake(
  deps: KeepDeps,
  key: CellKey,
  userId: string,
  ids: MediaResourceIds,
  close: () => Promise<void>,
): Promise<void> {
  try {
    await close();
  } catch (err) {
    // Still recorded: the user's next release closes it.
    deps.logger.warn({ err }, 'closing a refused media resource failed');
    return;
  }
  await deps.state.forget(key, userId, ids);
}

/**
 * Records a created resource, and this process as a holder of the user's media in the
 * room (so that, should it die, another node releases it); if that fails, closes it again
 * so nothing leaks unrecorded.
 */
async function record(
  deps: KeepDeps,
  write: () => Promise<void>,
  undo: () => Promise<void>,
  room: { key: CellKey; mediaServer: string | null },
  userId: string,
): Promise<void> {
  const { holders, rules } = deps;
  try {
    await Promise.all([write(), holders?.hold(rules.kind, room.key, userId, room.mediaServer)]);
  } catch (error) {
    await undo().catch((err: unknown) =>
      deps.logger.warn({ err }, 'closing an unrecorded media resource failed'),
    );
    throw error;
  }
}
