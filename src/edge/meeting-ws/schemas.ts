/**
 * Payloads of the meeting's C→S events (meeting-api.md, 客户端白名单). Taken as typed:
 * nothing is coerced (`"17"` is not a user id, `"true"` not a boolean), and a wrong or
 * missing field is refused with `参数错误: <field>: <rule>`. mediasoup's own objects
 * (DTLS and RTP parameters, RTP capabilities) are checked for shape only; the media server
 * checks them in depth.
 */
import { z } from 'zod';
import { errors } from '../../shared/error-codes.js';

/** The seed's 9-digit meeting code `XXX-XXX-XXX`. */
const roomCode = z.string().regex(/^\d{3}-\d{3}-\d{3}$/, 'XXX-XXX-XXX');
/** Ids the media server made (UUIDs in practice). */
const mediaId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, '1-128 of A-Za-z0-9_-');
/** A JSON object, passed through as is. */
const mediaJson = z.record(z.string(), z.unknown());
/** The seed's int64 user id: a JSON integer, never a string. */
const userId = z
  .int()
  .positive()
  .max(Number.MAX_SAFE_INTEGER)
  .transform((n) => String(n));

export const RoomPayload = z.object({ room_code: roomCode });

export const MemberStatePayload = z
  .object({
    room_code: roomCode,
    target_user_id: userId.optional(),
    audio_enabled: z.boolean().optional(),
    video_enabled: z.boolean().optional(),
    hand_raised: z.boolean().optional(),
  })
  .refine(
    (p) =>
      p.audio_enabled !== undefined || p.video_enabled !== undefined || p.hand_raised !== undefined,
    { message: 'one of audio_enabled, video_enabled, hand_raised is required' },
  );

export const TransportCreatePayload = z.object({
  room_code: roomCode,
  direction: z.enum(['send', 'recv']),
});

export const TransportConnectPayload = z.object({
  room_code: roomCode,
  transport_id: mediaId,
  dtls_parameters: mediaJson,
});

export const ProduceStartPayload = z.object({
  room_code: roomCode,
  transport_id: mediaId,
  kind: z.enum(['audio', 'video']),
  rtp_parameters: mediaJson,
});

export const ConsumeStartPayload = z.object({
  room_code: roomCode,
  transport_id: mediaId,
  producer_id: mediaId,
  rtp_capabilities: mediaJson,
});

export const ProducerClosePayload = z.object({ room_code: roomCode, producer_id: mediaId });

export const ConsumeResumePayload = z.object({ consumer_id: mediaId });

/** Parses `data` or throws BAD_REQUEST naming the first bad field. */
export function parsePayload<S extends z.ZodType>(schema: S, data: unknown): z.output<S> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw errors.BAD_REQUEST(`${where}${issue?.message ?? 'invalid data'}`);
}
