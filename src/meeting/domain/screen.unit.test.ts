/**
 * Screen sharing: one share per meeting; the sharer's retry changes nothing; another member
 * is refused unless the host takes over or the share is stale (named by the edge, past its
 * grace); a stop by someone who does not share is nothing; a leave ends the share.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { STALE_SHARE_GRACE_MS } from './decide-screen.js';
import { given, HOST, leave, meetingWith, NOW, T0 } from './testing/given-when-then.js';
import type { MeetingCommand, MeetingEvent } from './types.js';

const start = (user_id: string, stale_sharer_id: string | null = null): MeetingCommand => ({
  type: 'StartScreenShare',
  user_id,
  stale_sharer_id,
});
const stop = (user_id: string): MeetingCommand => ({ type: 'StopScreenShare', user_id });
const started = (user_id: string, at_ms = NOW): MeetingEvent => ({
  type: 'ScreenShareStarted',
  user_id,
  at_ms,
});
const stopped = (user_id: string, actor_id = user_id, at_ms = NOW): MeetingEvent => ({
  type: 'ScreenShareStopped',
  user_id,
  actor_id,
  at_ms,
});

describe('screen sharing', () => {
  it('lets one member share; a retry is nothing; another is refused', () => {
    const state = given(meetingWith(['u-1', 'u-2']))
      .when(start('u-1'))
      .then([started('u-1')]);
    assert.deepEqual(state.screen_share, { user_id: 'u-1', since_ms: NOW });
    const sharing = [...meetingWith(['u-1', 'u-2']), started('u-1', T0)];
    given(sharing).when(start('u-1')).then([]);
    given(sharing).when(start('u-2')).thenError('SCREEN_SHARE_BUSY');
    given(meetingWith(['u-1']))
      .when(start('u-9'))
      .thenError('NOT_IN_MEETING');
  });

  it('lets the host take a share over: the old sharer stops, named by the host', () => {
    given(meetingWith(['u-1']), started('u-1', T0))
      .when(start(HOST))
      .then([stopped('u-1', HOST), started(HOST)]);
  });

  it('lets anyone take over a stale share, once past its grace', () => {
    const sharing = [...meetingWith(['u-1', 'u-2']), started('u-1', T0)];
    given(sharing)
      .when(start('u-2', 'u-1'), { nowMs: T0 + STALE_SHARE_GRACE_MS - 1 })
      .thenError('SCREEN_SHARE_BUSY');
    const at = T0 + STALE_SHARE_GRACE_MS;
    given(sharing)
      .when(start('u-2', 'u-1'), { nowMs: at })
      .then([stopped('u-1', 'u-2', at), started('u-2', at)]);
    // Naming someone who does not share takes nothing over.
    given(sharing).when(start('u-2', HOST), { nowMs: at }).thenError('SCREEN_SHARE_BUSY');
  });

  it('ends with its sharer’s stop or leave; anyone else’s stop is nothing', () => {
    const sharing = [...meetingWith(['u-1', 'u-2']), started('u-1', T0)];
    given(sharing).when(stop('u-2')).then([]);
    const after = given(sharing)
      .when(stop('u-1'))
      .then([stopped('u-1')]);
    assert.equal(after.screen_share, null);
    const events = given(sharing).when(leave('u-1')).result as MeetingEvent[];
    assert.equal(given(sharing, events).state.screen_share, null, 'who left shares nothing');
    given(sharing, events)
      .when(start('u-2'))
      .then([started('u-2')]);
  });
});
