/**
 * The recordings' part of the internal API (./recorder.ts): whether this server can record,
 * start and stop a room's recording, its manifest, and its files (with range requests, for
 * the nodes that relay a download to a user). Registered inside the token-checking scope.
 */
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { sendOk } from '../shared/http-envelope.js';
import type { Recorder } from './recorder.js';
import { handle, parse, roomParams } from './schemas.js';

const ok = (request: FastifyRequest, reply: FastifyReply, data: unknown) =>
  sendOk(request, reply, data, 200);

const recordingParams = z.object({ id: z.string() });
const fileParams = z.object({ id: z.string(), file: z.string() });
const startBody = z.strictObject({ recording_id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/) });

export function registerRecordingRoutes(
  app: FastifyInstance,
  recorder: Recorder,
  dir: string,
): void {
  // `reply.sendFile` only (no route of its own): Range, ETag and Content-Type done right.
  void app.register(fastifyStatic, { root: path.resolve(dir), serve: false });
  app.get(
    '/internal/v1/recordings/support',
    handle(async (request, reply) => ok(request, reply, { available: await recorder.available() })),
  );
  app.post(
    '/internal/v1/rooms/:room_code/recordings',
    handle(async (request, reply) => {
      const { room_code } = parse(roomParams, request.params);
      const { recording_id } = parse(startBody, request.body);
      return ok(request, reply, await recorder.start(room_code, recording_id));
    }),
  );
  app.post(
    '/internal/v1/recordings/:id/stop',
    handle(async (request, reply) => {
      const { id } = parse(recordingParams, request.params);
      return ok(request, reply, await recorder.stop(id));
    }),
  );
  app.get(
    '/internal/v1/recordings/:id',
    handle(async (request, reply) => {
      const { id } = parse(recordingParams, request.params);
      return ok(request, reply, await recorder.manifest(id));
    }),
  );
  app.get(
    '/internal/v1/recordings/:id/files/:file',
    handle(async (request, reply) => {
      const { id, file } = parse(fileParams, request.params);
      await recorder.file(id, file); // a file its manifest lists, or 404
      return reply.sendFile(`${id}/${file}`);
    }),
  );
}
