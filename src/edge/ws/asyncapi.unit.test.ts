/**
 * The WebSocket's AsyncAPI document as a client team reads it: valid AsyncAPI 3.0.0 for the
 * official parser (@asyncapi/parser), one message per declared event, ACK and frame, and
 * exactly the events the hub handles (the hub's own and each room kind's registrations,
 * made from the same declarations), each ACK's refusal reasons a closed enum of registry codes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Parser } from '@asyncapi/parser';
import { MemoryRealtimeBus } from '../../adapters/memory/memory-bus.js';
import { silentLogger } from '../../cell/testing/harness.js';
import { MeetingSignalling } from '../../meeting/signalling/signalling.js';
import { meetingReasons } from '../../meeting/domain/errors.js';
import { nodeWsProtocol } from '../../main/ws-protocol.js';
import { errorCatalog } from '../../shared/error-codes.js';
import { voiceRoomReasons } from '../../voice-room/domain/errors.js';
import { ROOM_FRAMES } from '../../voice-room/api/voice-frames.js';
import { VoiceMediaSignalling } from '../../voice-room/signalling/signalling.js';
import { buildAsyncApi } from './asyncapi.js';
import { WsHub } from './hub.js';
import { reasonsOf } from './ws-declarations.js';

type Doc = {
  components: { messages: Record<string, { name: string; payload: Record<string, unknown> }> };
  operations: Record<string, { action: string }>;
  channels: { ws: { address: string; 'x-close-codes': { code: number }[] } };
};

const declared = nodeWsProtocol.flatMap((p) => p.events.map((e) => e.event));

describe('AsyncAPI document of /ws', () => {
  it('is valid AsyncAPI 3.0.0 for the official parser', async () => {
    const doc = buildAsyncApi(nodeWsProtocol);
    const { document, diagnostics } = await new Parser().parse(doc as never);
    // Spectral severities: 0 error, 1 warning (2 info: "3.1.0 exists" is fine).
    const problems = diagnostics.filter((d) => Number(d.severity) < 2);
    assert.deepEqual(
      problems.map((d) => `${d.code} ${d.message} at ${d.path.join('.')}`),
      [],
    );
    assert.ok(document, 'the parser made a document');
    assert.equal(document.version(), '3.0.0');
    assert.equal(document.channels().all()[0]?.address(), '/ws');
  });

  it('has a send, an ACK and a receive message for every declaration, and the close codes', () => {
    const doc = buildAsyncApi(nodeWsProtocol) as unknown as Doc;
    const names = (prefix: string) =>
      Object.entries(doc.components.messages)
        .filter(([key]) => key.startsWith(prefix))
        .map(([, m]) => m.name)
        .sort();
    assert.deepEqual(names('send.'), [...declared].sort());
    assert.deepEqual(names('ack.'), declared.map((e) => `${e}.ack`).sort());
    const frames = nodeWsProtocol.flatMap((p) => p.frames.map((f) => f.event));
    assert.deepEqual(names('frame.'), [...frames].sort());
    assert.equal(new Set(declared).size, declared.length, 'an event declared twice');
    for (const [key, op] of Object.entries(doc.operations)) {
      assert.equal(op.action, key.startsWith('send.') ? 'send' : 'receive', key);
    }
    assert.deepEqual(
      doc.channels.ws['x-close-codes'].map((c) => c.code).sort(),
      [1001, 1013, 4001, 4008, 4029, 4400, 4409],
    );
    // Every framed voice-room event has its declared data (and so a message).
    for (const name of Object.values(ROOM_FRAMES)) {
      if (name) assert.ok(frames.includes(name), name);
    }
  });

  it('names only known refusal codes in each ACK', () => {
    const known = new Set([
      ...errorCatalog.map((e) => e.code),
      ...meetingReasons.map((r) => r.code),
      ...voiceRoomReasons.map((r) => r.code),
    ]);
    for (const event of nodeWsProtocol.flatMap((p) => p.events)) {
      for (const reason of reasonsOf(event))
        assert.ok(known.has(reason), `${event.event}: ${reason}`);
    }
  });

  it('declares exactly the events the hub handles', async () => {
    const bus = new MemoryRealtimeBus();
    const hub = new WsHub(
      { maxBufferedBytes: 1 << 20, pingIntervalMs: 60_000 },
      {
        bus,
        logger: silentLogger,
        authenticate: () => Promise.resolve(null),
        canFollow: () => Promise.resolve(false),
      },
    );
    // The kinds register their events when made; nothing else of theirs runs here.
    const unused = {} as never;
    const meeting = new MeetingSignalling({
      hub,
      logger: silentLogger,
      nodeId: 'n1',
      membership: unused,
      media: unused,
      state: unused,
      broadcaster: unused,
    });
    const voice = new VoiceMediaSignalling({
      hub,
      logger: silentLogger,
      api: unused,
      media: unused,
      state: unused,
      broadcaster: unused,
      fallbackServer: null,
    });
    try {
      assert.deepEqual([...hub.events].sort(), [...declared].sort());
    } finally {
      await Promise.all([meeting.close(), voice.close(), hub.close()]);
    }
  });
});
