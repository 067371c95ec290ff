/**
 * The meeting routes' documentation is derived from each endpoint's declaration, and a
 * declared endpoint without a summary stops the node at start-up, naming the call.
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
  rest: { method: 'POST', path: '/invite-tokens/:token/redeem' },
  body: z.strictObject({ request_id: z.string().optional() }),
  reply: z.null(),
  handle: () => Promise.resolve(null),
};

describe('meetingRouteDoc', () => {
  it('refuses a declared call without a summary, naming it and its route', () => {
    assert.throws(
      () => meetingRouteDoc('ArchiveMeeting', { ...redeem, rest: { method: 'POST', path: '/x' } }),
      (e: Error) =>
        e.message.includes('ArchiveMeeting') &&
        e.message.includes('POST /x') &&
        e.message.includes('meeting-route-docs.ts'),
    );
  });

  it("documents a later route's own path parameter, and no 404 outside a meeting", () => {
    const doc = meetingRouteDoc('RedeemInvite', redeem).config.openapi;
    assert.equal(doc.tag, 'meetings');
    assert.equal(doc.access, 'user');
    assert.deepEqual(doc.params?.required, ['token']);
    assert.ok(doc.body, 'a POST documents its body');
    assert.deepEqual(Object.keys(doc.responses).sort(), ['200', '400']);
  });

  it('documents a GET by its query string, never a body', () => {
    const doc = meetingRouteDoc('ListChats', meetingCalls.ListChats).config.openapi;
    assert.equal(doc.body, undefined);
    assert.deepEqual(Object.keys(doc.query?.properties as object).sort(), ['before_id', 'limit']);
    assert.deepEqual(doc.params?.required, ['code']);
  });
});
