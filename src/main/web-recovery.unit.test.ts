/**
 * The web client's recovery after a drop (web/src/recovery.ts) against a scripted socket:
 * the restore runs after every open, a transient failure is retried on the same socket, a
 * lasting one is reported once, and the page shows `reconnecting` from a drop until a
 * restore succeeded. (What is transient is the SDK's: packages/client/test/transient.unit.test.ts.)
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { Recovery } from '../../web/src/recovery.js';
import { ApiError, WsError } from './testing/web-modules.js';

/** What the recovery uses of the socket, driven by the test. */
class ScriptedSocket {
  opens = 0;
  isOpen = false;
  private readonly opened = new Set<() => void>();
  private readonly closed = new Set<() => void>();
  onOpen(handler: () => void) {
    this.opened.add(handler);
    if (this.isOpen) handler();
    return () => this.opened.delete(handler);
  }
  onClose(handler: () => void) {
    this.closed.add(handler);
    return () => this.closed.delete(handler);
  }
  open() {
    this.opens += 1;
    this.isOpen = true;
    for (const h of this.opened) h();
  }
  drop() {
    this.isOpen = false;
    for (const h of this.closed) h();
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A started recovery whose `n`-th restore (from 1) fails with `failure(n)`, if any. */
function started(failure: (n: number) => Error | undefined) {
  const socket = new ScriptedSocket();
  const errors: unknown[] = [];
  let restores = 0;
  const recovery = new Recovery(
    socket,
    () => {
      const error = failure(++restores);
      return error ? Promise.reject(error) : Promise.resolve();
    },
    (e) => errors.push(e),
  );
  recovery.start();
  return { socket, recovery, errors, restores: () => restores };
}

describe('web client recovery', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  it('restores after every open, shows reconnecting from a drop until then', async () => {
    const { socket, recovery, errors, restores } = started(() => undefined);
    assert.equal(recovery.state.value, 'joining');
    socket.open();
    await settle();
    assert.deepEqual([restores(), recovery.state.value], [1, 'live']);
    socket.drop();
    assert.equal(recovery.state.value, 'reconnecting');
    socket.open();
    await settle();
    assert.deepEqual([restores(), recovery.state.value, errors], [2, 'live', []]);
    recovery.stop();
    socket.drop();
    socket.open();
    await settle();
    assert.equal(restores(), 2, 'nothing after stop');
  });

  it('retries a transient failure on the same socket with backoff, stays reconnecting meanwhile', async () => {
    // Back on another node, whose first answers say the room's owner is not reachable yet.
    const failures = new Map<number, Error>([
      [2, new WsError('a', 'OWNER_UNREACHABLE')],
      [3, new ApiError('b', 503, 'BUSY')],
    ]);
    const { socket, recovery, errors, restores } = started((n) => failures.get(n));
    socket.open();
    await settle();
    assert.deepEqual([restores(), recovery.state.value], [1, 'live']);
    socket.drop();
    socket.open();
    await settle();
    assert.deepEqual([restores(), recovery.state.value], [2, 'reconnecting']);
    mock.timers.tick(500);
    await settle();
    assert.deepEqual([restores(), recovery.state.value], [3, 'reconnecting']);
    mock.timers.tick(999);
    await settle();
    assert.equal(restores(), 3, 'the second retry waits twice as long');
    mock.timers.tick(1);
    await settle();
    assert.deepEqual([restores(), recovery.state.value, errors], [4, 'live', []]);
    recovery.stop();
  });

  it('reports a lasting failure once and does not retry it', async () => {
    const gone = new WsError('会议不存在', 'MEETING_NOT_FOUND');
    const { socket, recovery, errors, restores } = started(() => gone);
    socket.open();
    await settle();
    mock.timers.tick(60_000);
    await settle();
    assert.deepEqual([restores(), errors], [1, [gone]]);
    recovery.stop();
  });

  it('drops a retry of an older socket: the newer one starts over', async () => {
    const { socket, recovery, errors, restores } = started((n) =>
      n === 1 ? new WsError('gone', 'DISCONNECTED') : undefined,
    );
    socket.open(); // restore 1 fails: a retry is due in 500 ms
    await settle();
    socket.drop();
    socket.open(); // restore 2 on the new socket
    await settle();
    mock.timers.tick(5_000);
    await settle();
    assert.deepEqual([restores(), recovery.state.value, errors], [2, 'live', []]);
    recovery.stop();
  });
});
