/**
 * The voice room's state from a stored snapshot (parsed JSON). A snapshot holds the state as
 * it was: today's round-trips as is (its presence book is plain data). Snapshots written
 * before the presence book hold `presence` as a plain record of everyone who ever came in,
 * each with their Presence machine state: the present users are kept, the others forgotten
 * (see VoiceRoomState.presence), which changes no command, answer or view.
 */
import { emptyPresenceBook, isPresenceBook, withPresence } from './presence-book.js';
import type { PresenceState, VoiceRoomState } from './types.js';

/** A presence entry of a snapshot written before the presence book. */
interface RecordedPresence {
  readonly state: PresenceState;
  readonly joined_at_ms: number;
  readonly last_seen_at_ms: number;
}

type RecordedState = Omit<VoiceRoomState, 'presence'> & {
  readonly presence: Readonly<Record<string, RecordedPresence>>;
};

export function voiceRoomFromSnapshot(stored: unknown): VoiceRoomState {
  const state = stored as VoiceRoomState | RecordedState;
  if (isPresenceBook(state.presence)) return state as VoiceRoomState;
  let presence = emptyPresenceBook();
  // Own keys only (Object.entries): a user id like `__proto__` is an ordinary id.
  for (const [userId, p] of Object.entries(state.presence)) {
    if (p.state !== 'present') continue;
    presence = withPresence(presence, userId, {
      state: 'present',
      joined_at_ms: p.joined_at_ms,
      last_seen_at_ms: p.last_seen_at_ms,
    });
  }
  return { ...state, presence };
}
