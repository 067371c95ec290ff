/**
 * The meeting routes' documentation is derived from each endpoint's declaration: its summary
 * (a route cannot be declared without one), who may call it, its path parameters, its body or
 * query string and its reply.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { meetingCalls } from '../api/commands.js';
import type { MeetingDeclaration } from '../api/declaration.js';
import { meetingRouteDoc } from './meeting-route-docs.js';

/** An endpoint declared later, like the invite redemption of meeting-api.md. */
const redeem: MeetingDeclaration = {
  kind: 'command',
  scope: 'none',
  refuses: ['INVITE_EXPIRED'],
  rest: { summary: 'Redeem an invite token', method: 'POST', path: '/invite-tokens/:token/redeem' },
  body: z.strictObject({ request_id: z.string().optional() }),
  reply: z.null(),
  handle: () => Promise.resolve(null),
};

describe('meetingRouteDoc', () => {
  it('documents every declared route with the summary declared with it; host-only ones 403', () => {
    for (const [name, declared] of Object.entries(meetingCalls)) {
      if (!declared.rest) continue;
      const doc = meetingRouteDoc(name, declared).config.openapi;
      assert.equal(doc.summary, declared.rest.summary, name);
      assert.ok(doc.summary.length > 8, `${name}: a summary that says something`);
      assert.equal(403 in doc.responses, declared.rest.hostOnly === true, `${name}: 403`);
    }
  });

  it("documents a later route's own path parameter, no 404 outside a meeting, 409 for a reused id", () => {
    const doc = meetingRouteDoc('RedeemInvite', redeem).config.openapi;
    assert.equal(doc.tag, 'meetings');
    assert.equal(doc.access, 'user');
    assert.deepEqual(doc.params?.required, ['token']);
    assert.ok(doc.body, 'a POST documents its body');
    assert.deepEqual(Object.keys(doc.responses).sort(), ['200', '400', '409']);
  });

  it('documents a GET by its query string, never a body', () => {
    const doc = meetingRouteDoc('ListChats', meetingCalls.ListChats).config.openapi;
    assert.equal(doc.body, undefined);
    assert.deepEqual(Object.keys(doc.query?.properties as object).sort(), ['before_id', 'limit']);
    assert.deepEqual(doc.params?.required, ['code']);
  });
});
