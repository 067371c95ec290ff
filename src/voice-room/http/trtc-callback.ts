/**
 * Tencent TRTC room and media event callbacks → the voice room's RTC commands.
 * 104 exit room → room_exited, 203 audio start → audio_started, 204 audio stop →
 * audio_stopped. Signed with `Sign = base64(HMAC-SHA256(callback key, raw body))`; a
 * retry carries the same UniqueId, which becomes the request id (applied once); late or
 * reordered events are ordered by EventMsTs inside the room.
 */
import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../shared/errors.js';
import { secretEquals } from '../../shared/secrets.js';
import type { RpcName } from '../api/commands.js';
import type { VoiceRoomApi } from '../api/voice-api.js';
import { httpStatusOf } from '../../shared/http-envelope.js';
import { documented, jsonSchemaOf } from '../../edge/http/openapi.js';

export interface TrtcApp {
  readonly sdkAppId: string;
  readonly appCode: string;
  readonly callbackKey: string;
}

const EVENT_TO_RPC: Readonly<Record<number, RpcName>> = {
  104: 'RtcRoomExited',
  203: 'RtcAudioStarted',
  204: 'RtcAudioStopped',
};

const callbackSchema = z.object({
  EventGroupId: z.number().int(),
  EventType: z.number().int(),
  CallbackTs: z.number().optional(),
  EventInfo: z.object({
    RoomId: z.union([z.string().min(1), z.number().int()]),
    UserId: z.string().min(1),
    EventTs: z.number().optional(),
    EventMsTs: z.number().optional(),
    UniqueId: z.union([z.string(), z.number()]).optional(),
  }),
});

const answer = {
  type: 'object',
  properties: { code: { type: 'integer' }, message: { type: 'string' } },
};
const callbackDoc = documented({
  operationId: 'trtcCallback',
  tag: 'rtc callback',
  summary: 'Tencent TRTC room and media events (104 exit, 203 audio start, 204 audio stop)',
  description:
    'Signed by TRTC: `Sign` is base64(HMAC-SHA256(callback key, raw body)) with the key of ' +
    'the app `SdkAppId` names (ROOMS_TRTC_APPS). Other event types are acknowledged and ignored.',
  access: 'trtc',
  headers: {
    type: 'object',
    required: ['sdkappid'],
    properties: { sdkappid: { type: 'string', pattern: '^\\d+$' } },
  },
  body: jsonSchemaOf(callbackSchema),
  responses: {
    200: '`{"code": 0}`: applied, or refused for good (not retried)',
    400: 'Malformed callback',
    401: 'Unknown SdkAppId or bad signature',
    503: 'The room is moving: TRTC delivers the event again',
  },
  raw: { schema: answer },
});

export function signatureOk(key: string, raw: Buffer, sign: string | undefined): boolean {
  if (!sign) return false;
  const expected = createHmac('sha256', key).update(raw).digest();
  return secretEquals(Buffer.from(sign, 'base64'), expected);
}

export function registerTrtcCallback(
  app: FastifyInstance,
  deps: { api: VoiceRoomApi; apps: readonly TrtcApp[] },
): void {
  const bySdkAppId = new Map(deps.apps.map((a) => [a.sdkAppId, a]));
  void app.register((scope, _opts, done) => {
    // The signature covers the exact bytes: keep the raw body, parse it ourselves.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, next) =>
      next(null, body),
    );
    scope.post('/api/v1/rtc/trtc/callback', callbackDoc, async (request, reply) => {
      const raw = request.body as Buffer;
      const sdkAppId = String(request.headers['sdkappid'] ?? '');
      const trtc = bySdkAppId.get(sdkAppId);
      const sign = request.headers['sign'];
      if (
        !trtc ||
        !signatureOk(trtc.callbackKey, raw, typeof sign === 'string' ? sign : undefined)
      ) {
        return reply.code(401).send({ code: 401, message: 'bad signature' });
      }
      let parsed;
      try {
        parsed = callbackSchema.safeParse(JSON.parse(raw.toString('utf8')));
      } catch {
        parsed = null;
      }
      if (!parsed?.success)
        return reply.code(400).send({ code: 400, message: 'malformed callback' });
      const event = parsed.data;
      const method = EVENT_TO_RPC[event.EventType];
      if (!method) return reply.send({ code: 0 }); // not an event the rooms act on
      const info = event.EventInfo;
      // The RTC clock only: a time of this server's would be compared with RTC times.
      const eventTimeMs =
        info.EventMsTs ?? (info.EventTs !== undefined ? info.EventTs * 1000 : null);
      if (eventTimeMs === null) {
        return reply.code(400).send({ code: 400, message: 'malformed callback: no EventTs' });
      }
      try {
        await deps.api.call(method, {
          app_code: trtc.appCode,
          room_id: String(info.RoomId),
          request_id: `trtc:${sdkAppId}:${info.UniqueId ?? `${event.EventType}:${info.UserId}:${eventTimeMs}`}`,
          user_id: info.UserId,
          event_time_ms: eventTimeMs,
        });
      } catch (error) {
        // Retrying cannot help a refused event (unknown room, bad id): acknowledge it.
        // Unavailable (owner moving) is answered 503 so TRTC delivers it again.
        if (error instanceof AppError && httpStatusOf(error.kind) < 500) {
          request.log.info({ err: error, method }, 'TRTC event refused');
          return reply.send({ code: 0 });
        }
        throw error;
      }
      return reply.send({ code: 0 });
    });
    done();
  });
}

/** Parses `sdkAppId:app_code:key[,…]` (ROOMS_TRTC_APPS). */
export function parseTrtcApps(spec: string): TrtcApp[] {
  if (!spec.trim()) return [];
  return spec.split(',').map((part) => {
    const [sdkAppId, appCode, ...key] = part.trim().split(':');
    const callbackKey = key.join(':');
    if (!sdkAppId || !/^\d+$/.test(sdkAppId) || !appCode || !callbackKey) {
      throw new Error(`bad TRTC app "${part}": expected sdkAppId:app_code:callback_key`);
    }
    return { sdkAppId, appCode, callbackKey };
  });
}
