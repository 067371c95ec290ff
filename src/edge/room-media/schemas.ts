/**
 * Payloads of the media events every room kind's signalling takes (transports, producers,
 * consumers), for the key that names the room in that kind (`room_code` for meetings,
 * `room_id` for voice rooms). Taken as typed: nothing is coerced, and a wrong or missing
 * field is refused with `参数错误: <field>: <rule>` (by the hub, which parses each payload
 * with its event's declaration: ./ws-events.ts). mediasoup's own objects (DTLS and RTP
 * parameters, RTP capabilities) are checked for shape only; the media server checks them
 * in depth.
 */
import { z } from 'zod';

/** Ids the media server made (UUIDs in practice). */
const mediaId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, '1-128 of A-Za-z0-9_-');
/** A plain transport's peer: the media server's own host, so loopback only. */
const loopbackIp = z
  .union([z.ipv4(), z.ipv6()])
  .refine((ip) => ip === '::1' || ip.startsWith('127.'), 'a loopback address (127.0.0.0/8, ::1)');
/** A JSON object, passed through as is. */
const mediaJson = z.record(z.string(), z.unknown());

type Room = { readonly room: string };
type Json = Record<string, unknown>;

/** The media payloads, each with the room under `room` whatever the kind calls it. */
export interface MediaPayloads {
  readonly TransportCreate: z.ZodType<Room & { direction: 'send' | 'recv' }>;
  readonly TransportConnect: z.ZodType<Room & { transport_id: string; dtls_parameters: Json }>;
  readonly PlainTransportConnect: z.ZodType<
    Room & { transport_id: string; ip: string; port: number }
  >;
  readonly ProduceStart: z.ZodType<
    Room & {
      transport_id: string;
      kind: 'audio' | 'video';
      rtp_parameters: Json;
      source?: 'microphone' | 'camera' | 'screen' | 'screen_audio' | undefined;
    }
  >;
  readonly ConsumeStart: z.ZodType<
    Room & { transport_id: string; producer_id: string; rtp_capabilities: Json }
  >;
  readonly ProducerClose: z.ZodType<Room & { producer_id: string }>;
  readonly ConsumeResume: z.ZodType<{ consumer_id: string }>;
}

/** The media payloads of a kind whose rooms are named by `field`, checked by `roomId`. */
export function mediaPayloads(field: 'room_code' | 'room_id', roomId: z.ZodString): MediaPayloads {
  const withRoom = <T extends z.ZodRawShape>(shape: T) =>
    z.object({ [field]: roomId, ...shape }).transform((parsed: Json) => {
      const { [field]: room, ...rest } = parsed;
      return { room, ...rest };
    }) as unknown as z.ZodType<Room & z.output<z.ZodObject<T>>>;
  return {
    TransportCreate: withRoom({ direction: z.enum(['send', 'recv']) }),
    TransportConnect: withRoom({ transport_id: mediaId, dtls_parameters: mediaJson }),
    PlainTransportConnect: withRoom({
      transport_id: mediaId,
      ip: loopbackIp.describe('Where the transport sends its RTP: a loopback address'),
      port: z.number().int().min(1).max(65535),
    }),
    ProduceStart: withRoom({
      transport_id: mediaId,
      kind: z.enum(['audio', 'video']),
      rtp_parameters: mediaJson,
      source: z
        .enum(['microphone', 'camera', 'screen', 'screen_audio'])
        .optional()
        .describe('What the track carries (default: microphone for audio, camera for video)'),
    }),
    ConsumeStart: withRoom({
      transport_id: mediaId,
      producer_id: mediaId,
      rtp_capabilities: mediaJson,
    }),
    ProducerClose: withRoom({ producer_id: mediaId }),
    ConsumeResume: z.object({ consumer_id: mediaId }),
  };
}
