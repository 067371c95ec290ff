/**
 * Payloads of the meeting's own C→S events (meeting-api.md, 客户端白名单; the media ones
 * are ../../edge/room-media/schemas.ts's, for `room_code`). Taken as typed:
 * nothing is coerced (`"17"` is not a user id, `"true"` not a boolean), and a wrong or
 * missing field is refused with `参数错误: <field>: <rule>`. mediasoup's own objects
 * (DTLS and RTP parameters, RTP capabilities) are checked for shape only; the media server
 * checks them in depth.
 */
import { z } from 'zod';

/** The seed's 9-digit meeting code `XXX-XXX-XXX`. */
export const roomCode = z.string().regex(/^\d{3}-\d{3}-\d{3}$/, 'XXX-XXX-XXX');
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

/**
 * `meeting.consumer.preferences`: one of the caller's consumers, with at least one wish.
 * `max_width` (the tile's width in device pixels) picks the smallest layer of the SDK's
 * camera ladder that covers it (../../edge/room-media/layers.ts); `spatial_layer` names one.
 */
export const ConsumerPreferencesPayload = z
  .object({
    consumer_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, '1-128 of A-Za-z0-9_-'),
    spatial_layer: z.int().min(0).max(2).optional(),
    max_width: z.int().min(1).max(16_384).optional(),
    paused: z.boolean().optional(),
  })
  .refine(
    (p) => p.spatial_layer !== undefined || p.max_width !== undefined || p.paused !== undefined,
    { message: 'one of spatial_layer, max_width, paused is required' },
  )
  .refine((p) => p.spatial_layer === undefined || p.max_width === undefined, {
    message: 'spatial_layer or max_width, not both',
  });
