/**
 * What the media signalling of every room kind shares: the broadcaster of frames outside a
 * room's frame chain, and the mapping of media server failures to the seed's ACK texts.
 */
import type { CellKey } from '../../cell/lease.js';
import {
  isMediaResourceNotFound,
  isMediaServerError,
} from '../../media-cluster/media-orchestrator.js';
import { AppError } from '../../shared/errors.js';
import { errors } from '../../shared/error-codes.js';

/** Port: a frame to every socket following a room, outside its frame chain. */
export interface RoomBroadcaster {
  toRoom(key: CellKey, event: string, data: Record<string, unknown>): void;
}

/**
 * Runs one orchestrator call; its failures become the seed's ACK texts: 会议资源不存在 and
 * 会议媒体服务暂不可用 as they are, anything else `mediaOrchestrator error: <detail>`.
 */
export async function mediaCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw asMediaError(error);
  }
}

export function asMediaError(error: unknown): AppError {
  if (isMediaResourceNotFound(error) || isMediaServerError(error)) return error as AppError;
  const detail = error instanceof AppError ? error.message : 'unexpected failure';
  return errors.MEDIA_ORCHESTRATOR_ERROR.withCause(error, detail);
}
