/**
 * The declarations of ./commands.ts against proto/room/v1/room_service.proto: the service's
 * methods are exactly the declared RPCs, each RPC's schema has exactly the fields of its
 * proto request message, only commands carry a request id, and no two RPCs claim one REST
 * route. (That each command type of the decider has a declaration is the compiler's check.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { z } from 'zod';
import { MEETING_CALL, roomServiceClient } from '../../edge/grpc/room-service.js';
import { WHO_ARE_YOU } from '../../edge/grpc/who-are-you.js';
import { FORWARD, FORWARD_BATCHED } from '../../edge/grpc/forward-stream.js';
import { meetingCalls } from '../../meeting/api/commands.js';
import { declarationOf, rpcNames } from './commands.js';

const service = roomServiceClient().service;

function protoFieldsOf(method: string): string[] {
  // proto-loader keeps each method's message descriptor next to its (de)serialisers.
  const definition = service[method] as unknown as {
    requestType: { type: { field: readonly { name: string }[] } };
  };
  return definition.requestType.type.field.map((f) => f.name).sort();
}

function schemaFieldsOf(schema: z.ZodType): string[] {
  return Object.keys((schema as z.ZodObject).shape).sort();
}

void describe('voice-room RPC declarations', () => {
  void it("declares exactly the methods of room.v1.RoomService (plus the meetings', WhoAreYou and the Forward streams)", () => {
    assert.deepEqual(
      [...rpcNames, MEETING_CALL, WHO_ARE_YOU, FORWARD, FORWARD_BATCHED].sort(),
      Object.keys(service).sort(),
    );
  });

  void it('MeetingCall carries the method, request id, caller, meeting and a JSON body', () => {
    assert.deepEqual(protoFieldsOf(MEETING_CALL), [
      'app_code',
      'body',
      'caller_id',
      'method',
      'request_id',
      'room_code',
    ]);
    // Every meeting endpoint is a command (with a request id) or a query (without one).
    for (const [name, d] of Object.entries(meetingCalls)) {
      assert.ok(['command', 'query'].includes(d.kind), name);
      assert.equal('request_id' in d.body.shape, d.kind === 'command', `${name} is a ${d.kind}`);
    }
  });

  void it("validates each RPC's request with the fields of its proto message", () => {
    for (const method of rpcNames) {
      assert.deepEqual(
        schemaFieldsOf(declarationOf(method).schema),
        protoFieldsOf(method),
        `${method}: schema fields differ from the proto message`,
      );
    }
  });

  void it('gives every command a request_id and no query one', () => {
    for (const method of rpcNames) {
      const declared = declarationOf(method);
      assert.equal(
        schemaFieldsOf(declared.schema).includes('request_id'),
        declared.kind === 'command',
        `${method} is a ${declared.kind}`,
      );
    }
  });

  void it('routes each REST method and path to one RPC, every field it fills in its request', () => {
    const seen = new Map<string, string>();
    for (const method of rpcNames) {
      const route = declarationOf(method).rest;
      if (!route) continue;
      const key = `${route.method} ${route.path}`;
      assert.equal(seen.get(key), undefined, `${key}: ${seen.get(key)} and ${method}`);
      seen.set(key, method);
      const fields = schemaFieldsOf(declarationOf(method).schema);
      const query = Object.keys(route.query ?? {});
      assert.ok(query.length === 0 || route.method === 'GET', `${method}: a query on a GET only`);
      for (const name of [
        ...(route.body ?? []),
        ...(route.caller ? [route.caller] : []),
        ...query,
      ]) {
        assert.ok(fields.includes(name), `${method}: ${name} is not a request field`);
      }
      if (route.path.includes(':room_id')) assert.ok(fields.includes('room_id'), method);
    }
    assert.ok(seen.size >= 14, 'the REST routes were not all found');
  });
});
