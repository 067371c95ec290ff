/**
 * Recordings (beyond the seed): the host starts and stops one at a time; a meeting that ends
 * stops its recording. The cell keeps each recording (its id, where its files are, when it
 * ran), so every node and a later owner know them; the media server records (a reaction of
 * the commit, retried until done: ./domain.ts).
 */
import type { DecideContext, Decision } from '../../domain/decider.js';
import { mustBeActive, mustBeHost, mustBeInProgress } from './guards.js';
import type { MeetingCommand, MeetingEvent, MeetingState, RecordingEntry } from './types.js';

type Cmd<T extends MeetingCommand['type']> = Extract<MeetingCommand, { type: T }>;

/** The running recording, or null. */
export function runningRecording(state: MeetingState): RecordingEntry | null {
  const last = state.recordings?.at(-1);
  return last && last.stopped_at_ms === null ? last : null;
}

export function startRecording(
  state: MeetingState,
  cmd: Cmd<'StartRecording'>,
  ctx: DecideContext,
): Decision<MeetingEvent> {
  const guard =
    mustBeInProgress(state) ??
    mustBeHost(state, cmd.operator_user_id) ??
    mustBeActive(state, cmd.operator_user_id);
  if (guard) return guard;
  if (runningRecording(state)) return [];
  const n = (state.recordings?.length ?? 0) + 1;
  return [
    {
      type: 'RecordingStarted',
      recording_id: `${state.room_code.replaceAll('-', '')}-${n}`,
      media_server: state.media_server,
      actor_id: cmd.operator_user_id,
      at_ms: ctx.nowMs,
    },
  ];
}

export function stopRecording(
  state: MeetingState,
  cmd: Cmd<'StopRecording'>,
  ctx: DecideContext,
): Decision<MeetingEvent> {
  const guard = mustBeInProgress(state) ?? mustBeHost(state, cmd.operator_user_id);
  if (guard) return guard;
  const running = runningRecording(state);
  return running ? [recordingStopped(running, 'stopped', cmd.operator_user_id, ctx)] : [];
}

export function recordingStopped(
  running: RecordingEntry,
  reason: 'stopped' | 'meeting_ended',
  actor: string | null,
  ctx: DecideContext,
): MeetingEvent {
  return {
    type: 'RecordingStopped',
    recording_id: running.recording_id,
    media_server: running.media_server,
    reason,
    actor_id: actor,
    at_ms: ctx.nowMs,
  };
}
