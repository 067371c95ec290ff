/**
 * `RealtimeClient.drop()` after a network change: the old socket's path is gone, so its
 * closing handshake never ends (no close event comes). The client must not wait for it: it
 * reconnects on a new socket at once, and a late close of the old one changes nothing.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { RealtimeClient, type SocketLike } from '../src/index.js';

/** A socket that opens at once and, like one on a dead path, never reports its close. */
class DeadPathSocket implements SocketLike {
  static made: DeadPathSocket[] = [];
  readyState = 0;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  onclose: ((event: { code: number; reason?: string }) => void) | null = null;
  closed = false;
  constructor(readonly url: string) {
    DeadPathSocket.made.push(this);
    setTimeout(() => {
      this.readyState = 1;
      this.onopen?.({});
    }, 0);
  }
  send(): void {}
  close(): void {
    this.closed = true;
  }
}

void describe('RealtimeClient.drop', () => {
  void it('reconnects without waiting for a close that never comes', async () => {
    const client = new RealtimeClient({
      url: () => 'ws://node.example/ws',
      WebSocket: DeadPathSocket,
      maxBackoffMs: 300,
    });
    client.connect();
    await sleep(20);
    assert.equal(client.opens, 1);
    const [first] = DeadPathSocket.made;
    client.drop();
    assert.equal(first!.closed, true, 'the old socket is told to close');
    for (let i = 0; i < 50 && client.opens < 2; i++) await sleep(20);
    assert.equal(client.opens, 2, 'a new socket opened');
    assert.equal(DeadPathSocket.made.length, 2);
    // The old socket's close, arriving late, does not drop the new one.
    first!.onclose?.({ code: 1006 });
    await sleep(400);
    assert.equal(DeadPathSocket.made.length, 2);
    assert.equal(client.status, 'open');
    client.close();
  });

  void it('names each socket, and the one a reconnect replaces, in the URL', async () => {
    DeadPathSocket.made = [];
    const client = new RealtimeClient({
      url: () => 'ws://node.example/ws?token=t',
      WebSocket: DeadPathSocket,
      maxBackoffMs: 300,
    });
    client.connect();
    for (let i = 0; i < 50 && client.opens < 1; i++) await sleep(20);
    client.drop();
    for (let i = 0; i < 50 && client.opens < 2; i++) await sleep(20);
    client.drop();
    for (let i = 0; i < 50 && client.opens < 3; i++) await sleep(20);
    const urls = DeadPathSocket.made.map((s) => new URL(s.url));
    assert.equal(urls.length, 3);
    const ids = urls.map((u) => u.searchParams.get('connection_id') ?? '');
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{8,64}$/);
    assert.equal(new Set(ids).size, 3);
    assert.equal(urls[0]!.searchParams.get('token'), 't');
    assert.equal(urls[0]!.searchParams.get('replaces'), null);
    assert.equal(urls[1]!.searchParams.get('replaces'), ids[0]);
    assert.equal(urls[2]!.searchParams.get('replaces'), ids[1]);
    client.close();
    // After a close for good, the next connect replaces nothing.
    client.connect();
    for (let i = 0; i < 50 && client.opens < 4; i++) await sleep(20);
    assert.equal(new URL(DeadPathSocket.made[3]!.url).searchParams.get('replaces'), null);
    client.close();
  });
});
