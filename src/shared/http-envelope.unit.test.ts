import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { AppError } from './errors.js';
import { envelopeTime, installEnvelopeErrors, sendOk } from './http-envelope.js';

function app() {
  const a = Fastify();
  installEnvelopeErrors(a);
  a.get('/ok', (req, reply) => sendOk(req, reply, { x: 1 }));
  a.post('/created', (req, reply) => sendOk(req, reply, { id: 7 }, 201));
  a.get('/closed', () => {
    throw new AppError('illegal_state', 'MEETING_ENDED', '会议已结束');
  });
  a.get('/forbidden', () => {
    throw new AppError('forbidden', 'HOST_ONLY', '仅主持人可操作');
  });
  a.get('/boom', () => {
    throw new Error('secret detail');
  });
  a.post(
    '/schema',
    {
      schema: {
        body: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } },
      },
    },
    (req, reply) => sendOk(req, reply, null),
  );
  return a;
}

describe('REST envelope', () => {
  it('wraps success as code 0 with trace_id and time', async () => {
    const res = await app().inject({ method: 'GET', url: '/ok', headers: { 'x-trace-id': 't-1' } });
    assert.equal(res.statusCode, 200);
    const body = res.json<Record<string, unknown>>();
    assert.deepEqual(
      { ...body, time: typeof body.time },
      {
        code: 0,
        message: 'success',
        data: { x: 1 },
        trace_id: 't-1',
        time: 'string',
      },
    );
    assert.match(String(body.time), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    assert.equal((await app().inject({ method: 'POST', url: '/created' })).statusCode, 201);
  });

  it('maps domain errors by kind, keeping the message and the reason', async () => {
    const closed = await app().inject({ method: 'GET', url: '/closed' });
    assert.equal(closed.statusCode, 400);
    assert.deepEqual(
      { ...closed.json<Record<string, unknown>>(), trace_id: null, time: null },
      { code: 400, message: '会议已结束', reason: 'MEETING_ENDED', trace_id: null, time: null },
    );
    const forbidden = await app().inject({ method: 'GET', url: '/forbidden' });
    assert.equal(forbidden.statusCode, 403);
    assert.equal(forbidden.json<{ code: number }>().code, 403);
  });

  it('answers 400 for schema errors, 404 for unknown routes, 500 without details otherwise', async () => {
    const bad = await app().inject({ method: 'POST', url: '/schema', payload: {} });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json<{ code: number }>().code, 400);
    const missing = await app().inject({ method: 'GET', url: '/nope' });
    assert.equal(missing.statusCode, 404);
    const boom = await app().inject({ method: 'GET', url: '/boom' });
    assert.equal(boom.statusCode, 500);
    assert.doesNotMatch(boom.body, /secret detail/);
  });

  it('formats time as local yyyy-mm-dd hh:mm:ss', () => {
    assert.equal(envelopeTime(new Date(2026, 3, 21, 16, 30, 5)), '2026-04-21 16:30:05');
  });
});
