/**
 * The web client's recovery after a drop (web/src/recovery.ts) against a scripted socket:
 * the restore runs after every open, a transient failure is retried on the same socket, a
 * lasting one is reported once, and the page shows `reconnecting` from a drop until a
 * restore succeeded.
 */
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { isTransient, Recovery } from '../../web/src/recovery.js';

/** The shapes of web/src/api.ts's ApiError and web/src/ws.ts's WsError (DOM modules). */
class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string,
  ) {
    super(message);
  }
}
class WsError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

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

describe('web client recovery', () => {
  it('tells transient failures from lasting ones', () => {
    assert.equal(isTransient(new WsError('x', 'OWNER_UNREACHABLE')), true);
    assert.equal(isTransient(new WsError('x', 'TIMEOUT')), true);
    assert.equal(isTransient(new ApiError('x', 503, 'OWNER_UNREACHABLE')), true);
    assert.equal(isTransient(new ApiError('x', 0, 'NETWORK')), true);
    assert.equal(isTransient(new WsError('你当前未在会议中', 'NOT_IN_MEETING')), false);
    assert.equal(isTransient(new ApiError('x', 400, 'VALIDATION')), false);
    assert.equal(isTransient(new Error('x')), false);
  });

  it('restores after every open, shows reconnecting from a drop until then', async () => {
    const socket = new ScriptedSocket();
    let restores = 0;
    const recovery = new Recovery(
      socket,
      () => {
        restores += 1;
        return Promise.resolve();
      },
      (e) => assert.fail(String(e)),
    );
    recovery.start();
    assert.equal(recovery.state.value, 'joining');
    socket.open();
    await settle();
    assert.deepEqual([restores, recovery.state.value], [1, 'live']);
    socket.drop();
    assert.equal(recovery.state.value, 'reconnecting');
    socket.open();
    await settle();
    assert.deepEqual([restores, recovery.state.value], [2, 'live']);
    recovery.stop();
    socket.drop();
    socket.open();
    await settle();
    assert.equal(restores, 2, 'nothing after stop');
  });

  it('retries a transient failure on the same socket with backoff, stays reconnecting meanwhile', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const socket = new ScriptedSocket();
      const failures: Error[] = [];
      let restores = 0;
      const errors: unknown[] = [];
      const recovery = new Recovery(
        socket,
        () => {
          restores += 1;
          const failure = failures.shift();
          return failure ? Promise.reject(failure) : Promise.resolve();
        },
        (e) => errors.push(e),
      );
      recovery.start();
      socket.open();
      await settle();
      assert.deepEqual([restores, recovery.state.value], [1, 'live']);
      // Back on another node, whose first answers say the room's owner is not reachable yet.
      failures.push(new WsError('a', 'OWNER_UNREACHABLE'), new ApiError('b', 503, 'BUSY'));
      socket.drop();
      socket.open();
      await settle();
      assert.deepEqual([restores, recovery.state.value], [2, 'reconnecting']);
      mock.timers.tick(500);
      await settle();
      assert.deepEqual([restores, recovery.state.value], [3, 'reconnecting']);
      mock.timers.tick(999);
      await settle();
      assert.equal(restores, 3, 'the second retry waits twice as long');
      mock.timers.tick(1);
      await settle();
      assert.deepEqual([restores, recovery.state.value, errors], [4, 'live', []]);
      recovery.stop();
    } finally {
      mock.timers.reset();
    }
  });

  it('reports a lasting failure once and does not retry it', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const socket = new ScriptedSocket();
      let restores = 0;
      const errors: unknown[] = [];
      const recovery = new Recovery(
        socket,
        () => {
          restores += 1;
          return Promise.reject(new WsError('会议不存在', 'MEETING_NOT_FOUND'));
        },
        (e) => errors.push(e),
      );
      recovery.start();
      socket.open();
      await settle();
      mock.timers.tick(60_000);
      await settle();
      assert.equal(restores, 1);
      assert.equal(errors.length, 1);
      recovery.stop();
    } finally {
      mock.timers.reset();
    }
  });

  it('drops a retry of an older socket: the newer one starts over', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const socket = new ScriptedSocket();
      let restores = 0;
      const recovery = new Recovery(
        socket,
        () => {
          restores += 1;
          return restores === 1
            ? Promise.reject(new WsError('gone', 'DISCONNECTED'))
            : Promise.resolve();
        },
        () => assert.fail('no error expected'),
      );
      recovery.start();
      socket.open(); // restore 1 fails: a retry is due in 500 ms
      await settle();
      socket.drop();
      socket.open(); // restore 2 on the new socket
      await settle();
      mock.timers.tick(5_000);
      await settle();
      assert.deepEqual([restores, recovery.state.value], [2, 'live']);
      recovery.stop();
    } finally {
      mock.timers.reset();
    }
  });
});
