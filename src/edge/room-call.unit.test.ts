/**
 * The one call path of every room kind, against a scripted kind: bad input runs nothing; a
 * node without cells sends the parsed call to the cells tier; a handler that finds the owner
 * elsewhere has the whole call sent there, once, and the owner's answer is the call's; a
 * forwarded call is never forwarded again; a stale remembered route runs the call again from
 * the start, except a command without a request id that may have run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import type { CellKey } from '../cell/lease.js';
import { errors } from '../shared/error-codes.js';
import { AppError } from '../shared/errors.js';
import { OwnerElsewhere, type RemoteRoute } from './owner-forward.js';
import { answerCall, type RoomCalls } from './room-call.js';

const Request = z.strictObject({ room: z.string(), n: z.int(), id: z.string().optional() });
type Req = z.output<typeof Request>;
const keyOf = (req: Req): CellKey => ({ appCode: 'a', roomId: req.room });
const remote = (cached = false): RemoteRoute => ({
  kind: 'remote',
  nodeId: 'owner',
  addr: '127.0.0.1:9',
  ...(cached ? { cached: true as const } : {}),
});

/** A kind whose handler answers `{ran: n}` here, or finds the owner elsewhere per `routes`. */
function scriptedKind(
  routes: (RemoteRoute | null)[],
  send: (addr: string, req: unknown) => Promise<unknown>,
) {
  const log: string[] = [];
  const calls: RoomCalls<'Add'> = {
    host: { forgetRoute: (key) => log.push(`forget ${key.roomId}`) },
    cellsTier: null,
    requestOf: () => Request,
    roomOf: (_m, req) => keyOf(req as Req),
    run: (_m, req) => {
      const r = req as Req;
      const route = routes.shift() ?? null;
      log.push(route ? 'run: elsewhere' : 'run: here');
      if (route) return Promise.reject(new OwnerElsewhere(route, keyOf(r)));
      return Promise.resolve({ ran: r.n });
    },
    send: (addr, _m, req) => {
      log.push(`send ${addr}`);
      return send(addr, req);
    },
    unkeyed: (_m, req) => (req as Req).id === undefined,
  };
  return { calls, log };
}

describe('answerCall', () => {
  it('runs a call here and answers what its handler made', async () => {
    const { calls, log } = scriptedKind([null], () => Promise.reject(new Error('not sent')));
    assert.deepEqual(await answerCall(calls, 'Add', { room: 'r', n: 1 }), { ran: 1 });
    assert.deepEqual(log, ['run: here']);
  });

  it('refuses input that does not parse, running and sending nothing', async () => {
    const { calls, log } = scriptedKind([null], () => Promise.reject(new Error('not sent')));
    await assert.rejects(answerCall(calls, 'Add', { room: 'r', n: '1' }), (e: unknown) => {
      return e instanceof AppError && e.code === 'INVALID_ARGUMENT' && e.message.includes('n');
    });
    assert.deepEqual(log, []);
  });

  it('sends the whole call to the owner a handler found, and answers the owner’s answer', async () => {
    const sent: unknown[] = [];
    const { calls, log } = scriptedKind([remote()], (_addr, req) => {
      sent.push(req);
      return Promise.resolve({ ran: 'there' });
    });
    assert.deepEqual(await answerCall(calls, 'Add', { room: 'r', n: 2, id: 'x' }), {
      ran: 'there',
    });
    assert.deepEqual(log, ['run: elsewhere', 'send 127.0.0.1:9']);
    assert.deepEqual(sent, [{ room: 'r', n: 2, id: 'x' }]);
  });

  it('never forwards a call that was forwarded to it', async () => {
    const { calls, log } = scriptedKind([remote()], () => Promise.resolve('sent'));
    await assert.rejects(
      answerCall(calls, 'Add', { room: 'r', n: 1, id: 'x' }, { forwarded: true }),
      (e: unknown) => e instanceof AppError && e.code === 'NOT_OWNER_NODE',
    );
    assert.deepEqual(log, ['run: elsewhere']);
  });

  it('runs the call again from the start when a remembered owner refused it, once', async () => {
    const refusing = () => Promise.reject(errors.NOT_OWNER_NODE('owner'));
    const { calls, log } = scriptedKind([remote(true), null], refusing);
    assert.deepEqual(await answerCall(calls, 'Add', { room: 'r', n: 3 }), { ran: 3 });
    assert.deepEqual(log, ['run: elsewhere', 'send 127.0.0.1:9', 'forget r', 'run: here']);
  });

  it('does not run again a command without a request id that an unreachable owner may have run', async () => {
    const unreachable = () => Promise.reject(errors.OWNER_UNREACHABLE('owner'));
    const { calls, log } = scriptedKind([remote(true), null], unreachable);
    await assert.rejects(
      answerCall(calls, 'Add', { room: 'r', n: 4 }),
      (e: unknown) => e instanceof AppError && e.code === 'OWNER_UNREACHABLE',
    );
    assert.deepEqual(log, ['run: elsewhere', 'send 127.0.0.1:9', 'forget r']);
    // The same with a request id runs again: the cell answers a copy its first outcome.
    const keyed = scriptedKind([remote(true), null], unreachable);
    assert.deepEqual(await answerCall(keyed.calls, 'Add', { room: 'r', n: 4, id: 'x' }), {
      ran: 4,
    });
  });

  it('sends every call whole to the cells tier from a node without cells', async () => {
    const { calls, log } = scriptedKind([null], () => Promise.resolve('from the tier'));
    const asked: (CellKey | null)[] = [];
    const gateway: RoomCalls<'Add'> = {
      ...calls,
      cellsTier: {
        addressFor: (key) => {
          asked.push(key);
          return Promise.resolve('127.0.0.1:7');
        },
      },
    };
    assert.equal(await answerCall(gateway, 'Add', { room: 'r', n: 5 }), 'from the tier');
    assert.deepEqual(asked, [{ appCode: 'a', roomId: 'r' }]);
    assert.deepEqual(log, ['send 127.0.0.1:7']);
  });
});
