/**
 * The voice-room media helper (packages/client/src/media/voice-media.ts) against a scripted
 * socket and device: a `voice.media.join` that is not answered in time, or answered "try
 * again", is tried again with backoff (each try waiting longer for its answer) until the
 * media is joined, then the listed producers are consumed and a seat holder whose microphone
 * is open sends (also one who took the seat while the join was in flight); a refusal that will not pass is shown and not retried; a consumer that
 * failed for a passing reason is made on a later try; close() ends every retry.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { VoiceMedia } from '../src/media/index.js';
import {
  refused,
  ScriptedSocket,
  scriptedDevice,
  settle,
  type ConnectionStates,
  type Produced,
} from './media-testing.js';

const ROOM = 'vr_room';
const JOINED = {
  router_id: 'router-1',
  rtp_capabilities: {},
  producers: [{ user_id: 7, producer_id: 'producer-of-7', kind: 'audio' }],
};

const fails = (reason: string) => () => refused(reason);
const answers = (value: unknown) => () => Promise.resolve(value);

function voiceMedia(socket: ScriptedSocket) {
  const errors: string[] = [];
  const produced: Produced[] = [];
  const states: ConnectionStates = new Map();
  const media = new VoiceMedia(socket, {
    roomId: ROOM,
    selfId: 1,
    onError: (m) => errors.push(m),
    makeDevice: () => scriptedDevice(produced, states),
  });
  return { media, errors, produced, states };
}

describe('voice media', () => {
  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const g = globalThis as Record<string, unknown>;
    g.MediaStream = class {};
    const track = { enabled: true, stop: () => undefined };
    g.navigator = {
      mediaDevices: {
        getUserMedia: () =>
          Promise.resolve({ getAudioTracks: () => [track], getTracks: () => [track] }),
      },
    };
  });
  afterEach(() => mock.timers.reset());

  it('tries an unanswered join again, waiting longer each time, then hears the seats', async () => {
    const socket = new ScriptedSocket();
    const noAnswer = fails('TIMEOUT');
    socket.script('voice.media.join', noAnswer, noAnswer, answers(JOINED));
    socket.script('voice.transport.create', answers({ id: 'recv-1' }));
    socket.script('voice.consume.start', (d) =>
      Promise.resolve({ id: `c-${String(d.producer_id)}` }),
    );
    const { media, errors } = voiceMedia(socket);

    await media.join();
    assert.deepEqual([media.status, media.reason], ['unavailable', 'refused: TIMEOUT']);
    mock.timers.tick(999);
    await settle();
    assert.equal(socket.sent('voice.media.join').length, 1, 'the first retry after 1 s');
    mock.timers.tick(1);
    await settle();
    assert.equal(socket.sent('voice.media.join').length, 2);
    mock.timers.tick(1_999);
    await settle();
    assert.equal(socket.sent('voice.media.join').length, 2, 'the second after 2 s more');
    mock.timers.tick(1);
    await settle();
    assert.deepEqual(
      socket.sent('voice.media.join').map((r) => r.timeoutMs),
      [4_000, 8_000, 10_000],
    );
    assert.equal(media.status, 'ready');
    assert.deepEqual(
      socket.sent('voice.consume.start').map((r) => r.data.producer_id),
      ['producer-of-7'],
    );
    assert.deepEqual([...media.remote.keys()], [7]);
    assert.deepEqual(errors, []);
    mock.timers.tick(60_000);
    await settle();
    assert.equal(socket.sent('voice.media.join').length, 3, 'nothing more once joined');
    media.close();
  });

  it('a seat holder who went live without media sends once a retried join succeeds', async () => {
    const socket = new ScriptedSocket();
    socket.script(
      'voice.media.join',
      fails('MEDIA_SERVER_ERROR'),
      answers({ ...JOINED, producers: [] }),
    );
    socket.script('voice.transport.create', (d) =>
      Promise.resolve({ id: `${String(d.direction)}-1` }),
    );
    const { media, produced } = voiceMedia(socket);

    await media.join();
    assert.equal(await media.publish(), false, 'the microphone opens, nothing is sent');
    mock.timers.tick(1_000);
    await settle();
    assert.equal(media.status, 'ready');
    // Opus with DTX (a quiet seat sends almost nothing) and in-band FEC.
    assert.deepEqual(produced, [
      { transportId: 'send-1', codecOptions: { opusDtx: true, opusFec: true } },
    ]);
    media.close();
  });

  it('a seat taken while the media is being joined sends once the join is answered', async () => {
    const socket = new ScriptedSocket();
    let answer = (_: unknown) => undefined as void;
    socket.script('voice.media.join', () => new Promise((resolve) => (answer = resolve)));
    socket.script('voice.transport.create', (d) =>
      Promise.resolve({ id: `${String(d.direction)}-1` }),
    );
    const { media, produced } = voiceMedia(socket);

    const joined = media.join();
    await settle();
    assert.equal(media.status, 'checking');
    const publishing = media.publish();
    await settle();
    assert.equal(produced.length, 0, 'nothing before the media is joined');
    answer({ ...JOINED, producers: [] });
    await joined;
    assert.equal(await publishing, true, 'it sends: the page must not confirm the seat itself');
    assert.deepEqual(
      produced.map((p) => p.transportId),
      ['send-1'],
    );
    media.close();
  });

  it('shows a refusal that will not pass, and does not try it again', async () => {
    const socket = new ScriptedSocket();
    socket.script('voice.media.join', fails('VOICE_MEDIA_NOT_JOINED'));
    const { media } = voiceMedia(socket);

    await media.join();
    mock.timers.tick(120_000);
    await settle();
    assert.equal(socket.sent('voice.media.join').length, 1);
    assert.deepEqual(
      [media.status, media.reason],
      ['unavailable', 'refused: VOICE_MEDIA_NOT_JOINED'],
    );
    media.close();
  });

  it('close() ends a pending retry; a new join replaces it', async () => {
    const socket = new ScriptedSocket();
    socket.script('voice.media.join', fails('TIMEOUT'));
    const { media } = voiceMedia(socket);

    await media.join();
    await media.join(); // a new socket's join: one retry pending (its second failure), not two
    mock.timers.tick(2_000);
    await settle();
    assert.equal(socket.sent('voice.media.join').length, 3);
    media.close();
    mock.timers.tick(120_000);
    await settle();
    assert.equal(socket.sent('voice.media.join').length, 3, 'nothing after close');
  });

  it('makes a consumer again after a passing failure; shows a lasting one once', async () => {
    const socket = new ScriptedSocket();
    socket.script(
      'voice.media.join',
      answers({
        ...JOINED,
        producers: [
          ...JOINED.producers,
          { user_id: 8, producer_id: 'producer-of-8', kind: 'audio' },
        ],
      }),
    );
    socket.script('voice.transport.create', answers({ id: 'recv-1' }));
    const tries = new Map<string, number>();
    socket.script('voice.consume.start', (d) => {
      const producer = String(d.producer_id);
      const n = (tries.get(producer) ?? 0) + 1;
      tries.set(producer, n);
      if (producer === 'producer-of-8') return fails('CONSUME_NOT_ALLOWED')();
      return n <= 2 ? fails('MEDIA_SERVER_ERROR')() : Promise.resolve({ id: `c-${producer}` });
    });
    const { media, errors } = voiceMedia(socket);

    await media.join();
    await settle();
    assert.deepEqual([...media.remote.keys()], []);
    mock.timers.tick(1_000);
    await settle();
    mock.timers.tick(2_000);
    await settle();
    assert.deepEqual([...media.remote.keys()], [7]);
    assert.deepEqual(Object.fromEntries(tries), { 'producer-of-7': 3, 'producer-of-8': 1 });
    assert.deepEqual(errors, ['无法接收 8 的声音: refused: CONSUME_NOT_ALLOWED']);
    media.close();
  });

  it('joins the media again when its transport fails (a lost edge whose reset never came)', async () => {
    const socket = new ScriptedSocket();
    socket.script('voice.media.join', answers(JOINED), answers(JOINED));
    socket.script('voice.transport.create', answers({ id: 'recv-1' }), answers({ id: 'recv-2' }));
    socket.script('voice.consume.start', (d) =>
      Promise.resolve({ id: `c-${String(d.producer_id)}` }),
    );
    const { media, states } = voiceMedia(socket);
    await media.join();
    await settle();
    assert.equal(media.status, 'ready');
    states.get('recv-1')?.('connected');
    await settle();
    assert.equal(
      socket.sent('voice.media.join').length,
      1,
      'a connected transport changes nothing',
    );

    states.get('recv-1')?.('failed');
    await settle();
    assert.equal(socket.sent('voice.media.join').length, 2);
    assert.deepEqual(
      socket.sent('voice.transport.create').map((r) => r.data.direction),
      ['recv', 'recv'],
    );
    assert.equal(media.status, 'ready');
    // The replaced transport failing late changes nothing.
    states.get('recv-1')?.('failed');
    await settle();
    assert.equal(socket.sent('voice.media.join').length, 2);
    media.close();
  });
});
