/**
 * Request bodies of the internal API (zod). Only the shape is checked here; mediasoup checks
 * RTP and DTLS parameters in depth and its TypeErrors become 400s as well.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { types } from 'mediasoup';
import { z } from 'zod';
import { AppError } from '../shared/errors.js';
import { errors } from '../shared/error-codes.js';
import { parseInput } from '../shared/parse-input.js';

/** Room names: `<kind>:<app_code>:<room id>` from the nodes, or any key of this alphabet. */
export const roomCode = z
  .string()
  .regex(/^[A-Za-z0-9._:@-]{1,256}$/, 'room code: [A-Za-z0-9._:@-]{1,256}');
const id = z.string().min(1).max(128);
const peerId = z.string().min(1).max(128);

const rtpCodec = z.looseObject({
  mimeType: z.string().min(1),
  payloadType: z.number().int().min(0).max(127),
  clockRate: z.number().int().positive(),
});

export const createRouterBody = z.object({ room_code: roomCode });
/** `POST /internal/v1/drain`: `{draining: false}` undrains; an empty body drains. */
export const drainBody = z.object({ draining: z.boolean().optional() });

export const createTransportBody = z
  .object({
    room_code: roomCode.optional(),
    router_id: id.optional(),
    direction: z.enum(['send', 'recv']),
    /** Who the transport is for (e.g. the user id); echoed in every event about it. */
    peer_id: peerId.optional(),
    /**
     * `plain`: plain RTP without ICE or DTLS, for a process on the server's own host (media
     * tests, benches); its `connect` names a loopback address. Default `webrtc`.
     */
    type: z.enum(['webrtc', 'plain']).optional(),
  })
  .refine((b) => (b.room_code === undefined) !== (b.router_id === undefined), {
    message: 'exactly one of room_code and router_id',
  });

/** Where a plain transport sends: a loopback address only (see `type` above). */
export const connectPlainBody = z.object({
  ip: z.union([z.ipv4(), z.ipv6()]).refine(isLoopback, 'a loopback address (127.0.0.0/8, ::1)'),
  port: z.number().int().min(1).max(65535),
});

function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.');
}

const srtpParameters = z.object({
  cryptoSuite: z.enum([
    'AEAD_AES_256_GCM',
    'AEAD_AES_128_GCM',
    'AES_CM_128_HMAC_SHA1_80',
    'AES_CM_128_HMAC_SHA1_32',
  ]),
  keyBase64: z.string().min(1).max(256),
});

/** One end of a pipe between two media servers: where it receives, and its SRTP keys. */
const pipeTuple = z.object({
  ip: z.union([z.ipv4(), z.ipv6()]),
  port: z.number().int().min(1).max(65535),
  srtp_parameters: srtpParameters,
});

/** `POST /internal/v1/edges`: the origin server opens an edge of its room here. */
export const openEdgeBody = z.object({
  room_code: roomCode,
  origin_server: z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, 'a media server id'),
  pipe: pipeTuple,
});
export const edgesQuery = z.object({ origin_server: openEdgeBody.shape.origin_server });

/** `POST /internal/v1/edges/:id/pipes`: an origin producer, piped in. */
export const pipeInBody = z.object({
  producer_id: id,
  kind: z.enum(['audio', 'video']),
  rtp_parameters: z.looseObject({ codecs: z.array(rtpCodec).min(1) }),
  paused: z.boolean(),
  peer_id: peerId.nullable(),
  app_data: z.lazy(() => appData),
});
export const pipeParams = z.object({
  id,
  producer_id: id,
  action: z.enum(['pause', 'resume', 'close']),
});

export const connectTransportBody = z.object({
  dtls_parameters: z.looseObject({
    role: z.enum(['auto', 'client', 'server']).optional(),
    fingerprints: z
      .array(z.object({ algorithm: z.string().min(1), value: z.string().min(1) }))
      .min(1),
  }),
});

/** Limits of a producer's `app_data`: a few ids, echoed in every event about the producer. */
export const APP_DATA_MAX_KEYS = 8;
export const APP_DATA_MAX_VALUE = 128;
const appDataKey = z.string().regex(/^[a-z_]{1,32}$/);
const appDataValue = z
  .string({ error: 'values must be strings' })
  .max(APP_DATA_MAX_VALUE, `values must be at most ${APP_DATA_MAX_VALUE} characters`);

/**
 * A producer's `app_data`: a flat object of at most 8 string values under `[a-z_]{1,32}`
 * keys. Checked before the record is read: zod would silently drop an own `__proto__` key.
 */
export const appData = z
  .custom<object>(
    (v) => !(v !== null && typeof v === 'object' && Object.hasOwn(v, '__proto__')),
    '__proto__ is not a key',
  )
  .pipe(
    z
      .record(appDataKey, appDataValue, {
        error: (issue) =>
          issue.code === 'invalid_key'
            ? 'keys must match [a-z_]{1,32}'
            : issue.code === 'invalid_type'
              ? 'must be an object of string values'
              : undefined,
      })
      .refine((o) => Object.keys(o).length <= APP_DATA_MAX_KEYS, {
        message: `at most ${APP_DATA_MAX_KEYS} keys`,
      }),
  );

export const createProducerBody = z.object({
  transport_id: id,
  kind: z.enum(['audio', 'video']),
  rtp_parameters: z.looseObject({
    mid: z.string().optional(),
    codecs: z.array(rtpCodec).min(1),
    encodings: z.array(z.looseObject({})).optional(),
    headerExtensions: z.array(z.looseObject({})).optional(),
    rtcp: z.looseObject({}).optional(),
  }),
  paused: z.boolean().optional(),
  /** Echoed as `app_data` in every event about the producer and in the room's listing. */
  app_data: appData.optional(),
});

export const createConsumerBody = z.object({
  transport_id: id,
  producer_id: id,
  rtp_capabilities: z.looseObject({
    codecs: z.array(z.looseObject({ mimeType: z.string(), kind: z.string() })).optional(),
    headerExtensions: z.array(z.looseObject({})).optional(),
  }),
});

/** A viewer's wishes for one consumer: the simulcast layer to forward, or none at all. */
export const consumerPreferencesBody = z.strictObject({
  spatial_layer: z.int().min(0).max(2).optional(),
  temporal_layer: z.int().min(0).max(2).optional(),
  paused: z.boolean().optional(),
});

export const idParams = z.object({ id });
export const roomParams = z.object({ room_code: roomCode });

/** Parses `value` or throws a `validation` AppError naming the first bad field. */
export function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  return parseInput(schema, value ?? {}, errors.VALIDATION);
}

/** The mediasoup types of the loosely checked bodies (mediasoup validates the rest). */
export const asDtls = (v: unknown) => v as types.DtlsParameters;
export const asRtpParameters = (v: unknown) => v as types.RtpParameters;
export const asRtpCapabilities = (v: unknown) => v as types.RtpCapabilities;

/**
 * mediasoup's errors in our taxonomy: bad parameters are the caller's (400), a call that
 * does not fit the resource's state is a conflict (409), anything else is ours (500).
 */
export function fromMediasoupError(error: unknown): unknown {
  if (error instanceof AppError || !(error instanceof Error)) return error;
  const name = error.name;
  if (error instanceof TypeError || name === 'TypeError' || name === 'UnsupportedError') {
    return errors.MEDIA_BAD_PARAMETERS.withCause(error, error.message);
  }
  if (name === 'InvalidStateError' || /already (called|connected|exists)/i.test(error.message)) {
    return errors.MEDIA_INVALID_STATE.withCause(error, error.message);
  }
  return error;
}

/** Runs a route's handler and maps mediasoup's own errors into the taxonomy. */
export const handle =
  <T>(fn: (request: FastifyRequest, reply: FastifyReply) => Promise<T>) =>
  async (request: FastifyRequest, reply: FastifyReply): Promise<T> => {
    try {
      return await fn(request, reply);
    } catch (error) {
      throw fromMediasoupError(error);
    }
  };
