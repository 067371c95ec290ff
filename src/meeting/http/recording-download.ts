/**
 * `GET /api/v1/meeting/rooms/:code/recordings/:recording_id/files/:file`: one track of a
 * recording, for the host and whoever took part (the caller's token; the same refusals as
 * the list), streamed from the media server that holds it, Range requests passed through
 * (206 with Content-Range). Not an envelope: the body is the file.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Authenticator } from '../../accounts/tokens.js';
import { authOf, requireAuth } from '../../edge/http/auth-routes.js';
import { errors } from '../../shared/error-codes.js';
import { parseInput } from '../../shared/parse-input.js';
import type { MeetingApi } from '../api/meeting-api.js';
import { meetingReasons } from '../domain/errors.js';
import { declaredRefusals, documented, jsonSchemaOf } from '../../edge/http/openapi.js';

const params = z.object({
  code: z.string(),
  recording_id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
  file: z.string().regex(/^[A-Za-z0-9_-]{1,100}\.(ogg|webm)$/),
});

export function registerRecordingDownload(
  app: FastifyInstance,
  deps: { api: MeetingApi; auth: Authenticator },
): void {
  app.get(
    '/api/v1/meeting/rooms/:code/recordings/:recording_id/files/:file',
    {
      preHandler: requireAuth(deps.auth),
      ...documented({
        operationId: 'downloadRecordingFile',
        tag: 'meetings',
        summary: 'Download one track of a recording (host and participants; Range works)',
        access: 'user',
        params: jsonSchemaOf(params),
        responses: {
          200: 'The file (Ogg Opus or WebM VP8)',
          206: 'The range asked for (Content-Range)',
          404: 'No such meeting, recording or file (会议不存在, 会议资源不存在)',
        },
        refusals: declaredRefusals(
          ['MEETING_NOT_FOUND', 'NOT_IN_MEETING', 'MEDIA_RESOURCE_NOT_FOUND'],
          meetingReasons,
        ),
        file: { contentType: 'application/octet-stream' },
      }),
    },
    async (request, reply) => {
      const me = authOf(request);
      const p = parseInput(params, request.params, errors.MEDIA_RESOURCE_NOT_FOUND);
      const { media_server } = await deps.api.call('RecordingSource', {
        app_code: me.appCode,
        caller_id: me.userId,
        room_code: p.code,
        recording_id: p.recording_id,
      });
      const range = request.headers.range;
      const answer = await deps.api.media
        .of(media_server)
        .recordingFile(p.recording_id, p.file, typeof range === 'string' ? range : undefined);
      if (answer.status !== 200 && answer.status !== 206) {
        (answer.body as NodeJS.ReadableStream & { resume(): void }).resume();
        throw answer.status === 416
          ? errors.INVALID_ARGUMENT('range: not satisfiable')
          : errors.MEDIA_RESOURCE_NOT_FOUND();
      }
      void reply.code(answer.status).headers({
        ...answer.headers,
        'content-disposition': `attachment; filename="${p.file}"`,
      });
      return reply.send(answer.body);
    },
  );
}
