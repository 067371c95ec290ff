/**
 * Recordings' endpoints (beyond the seed, in its conventions; docs/meetings.md,
 * "Recordings"): the host starts and stops; the host and whoever took part list them and
 * download their files (the download route streams from the media server:
 * ../http/recording-download.ts).
 */
import { z } from 'zod';
import type { MeetingState } from '../domain/types.js';
import { refuse } from '../domain/errors.js';
import { participantOf } from '../domain/evolve.js';
import { mustBeInProgress } from '../domain/guards.js';
import { errors } from '../../shared/error-codes.js';
import { AppError } from '../../shared/errors.js';
import type { RecordingManifest } from '../../media-server/recorder.js';
import { declare, IN_PROGRESS } from './declaration.js';
import { roomAfter } from './meeting-router.js';
import { idJson, timeJson } from './render.js';
import * as r from './replies.js';
import * as b from './requests.js';

/**
 * The host, or anyone who took part (a participant row, also after leaving or the end),
 * may see the meeting's recordings; others get the seed's refusals.
 */
function mayListRecordings(state: MeetingState | null, userId: string): MeetingState {
  if (!state || state.status === null) throw AppError.from(refuse('MEETING_NOT_FOUND'));
  if (state.host_id !== userId && !participantOf(state, userId)) {
    throw AppError.from(refuse('NOT_IN_MEETING'));
  }
  return state;
}

const recordingParams = { recording_id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/) };

export const recordingCalls = {
  StartRecording: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'HOST_ONLY', 'NOT_IN_MEETING', 'RECORDING_UNAVAILABLE'],
    rest: {
      summary: 'Start recording the meeting: every track to its own file (host)',
      hostOnly: true,
      method: 'POST',
      path: '/rooms/:code/recordings/start',
    },
    body: b.EmptyBody,
    reply: r.EndMeetingReply,
    handle: async (ctx, req, state) => {
      // Said before anything is decided: a media server without FFmpeg records nothing.
      const denied = state ? mustBeInProgress(state) : null;
      if (state && !denied && state.host_id === req.caller_id) {
        const server = state.media_server;
        const supported =
          server !== null &&
          (await ctx.media
            .of(server)
            .recordingSupported()
            .catch(() => false));
        if (!supported) throw errors.RECORDING_UNAVAILABLE();
      }
      return roomAfter(ctx, req, { type: 'StartRecording', operator_user_id: req.caller_id });
    },
  }),
  StopRecording: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'HOST_ONLY'],
    rest: {
      summary: 'Stop the running recording (host)',
      hostOnly: true,
      method: 'POST',
      path: '/rooms/:code/recordings/stop',
    },
    body: b.EmptyBody,
    reply: r.EndMeetingReply,
    handle: (ctx, req) =>
      roomAfter(ctx, req, { type: 'StopRecording', operator_user_id: req.caller_id }),
  }),
  ListRecordings: declare({
    kind: 'query',
    scope: 'room',
    refuses: ['MEETING_NOT_FOUND', 'NOT_IN_MEETING'],
    rest: {
      summary: 'The meeting’s recordings, oldest first, with their tracks (host and participants)',
      method: 'GET',
      path: '/rooms/:code/recordings',
    },
    body: b.EmptyBody.omit({ request_id: true }),
    reply: r.RecordingList,
    handle: async (ctx, req, state) => {
      const s = mayListRecordings(state, req.caller_id);
      const list = await Promise.all(
        (s.recordings ?? []).map(async (recording) => {
          const manifest: RecordingManifest | null = await ctx.media
            .of(recording.media_server)
            .recording(recording.recording_id)
            .catch(() => null);
          const base = `/api/v1/meeting/rooms/${s.room_code}/recordings/${recording.recording_id}`;
          return {
            recording_id: recording.recording_id,
            status: manifest?.status ?? ('unavailable' as const),
            started_at: timeJson(recording.started_at_ms)!,
            stopped_at: timeJson(recording.stopped_at_ms),
            duration_ms:
              manifest?.stopped_at_ms == null
                ? null
                : manifest.stopped_at_ms - manifest.started_at_ms,
            tracks: (manifest?.tracks ?? []).map((t) => ({
              file: t.file,
              kind: t.kind,
              codec: t.codec,
              user_id: t.user_id === null ? null : idJson(t.user_id),
              source: t.source,
              start_offset_ms: t.start_offset_ms,
              url: `${base}/files/${t.file}`,
            })),
          };
        }),
      );
      return { list };
    },
  }),
  /** Where a recording's files are, for a caller who may download them (no route). */
  RecordingSource: declare({
    kind: 'query',
    scope: 'room',
    refuses: ['MEETING_NOT_FOUND', 'NOT_IN_MEETING', 'MEDIA_RESOURCE_NOT_FOUND'],
    body: z.strictObject(recordingParams),
    reply: r.RecordingSource,
    handle: (_ctx, req, state) => {
      const s = mayListRecordings(state, req.caller_id);
      const recording = (s.recordings ?? []).find((x) => x.recording_id === req.recording_id);
      if (!recording) throw errors.MEDIA_RESOURCE_NOT_FOUND();
      return Promise.resolve({ media_server: recording.media_server });
    },
  }),
};
