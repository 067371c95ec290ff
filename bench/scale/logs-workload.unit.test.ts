import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_WORKLOAD,
  GHOST,
  openingSteps,
  roundSize,
  roundSteps,
  workloadSteps,
} from './logs-workload.js';

const commandsOf = (commands: number) =>
  [...workloadSteps(DEFAULT_WORKLOAD, commands)].flatMap((step) => step.together);

describe('logs workload', () => {
  it('opens the room, then every member joins', () => {
    const steps = openingSteps({ users: 3, seats: 2 });
    assert.deepEqual(
      steps.map((s) => s.together.map((c) => c.command.type)),
      [['CreateRoom'], ['JoinRoom'], ['JoinRoom'], ['JoinRoom']],
    );
  });

  it('sends a round as four changes one by one, then every heartbeat together', () => {
    const w = { users: 4, seats: 2 };
    const steps = roundSteps(w, 5);
    assert.deepEqual(
      steps.map((s) => s.together.length),
      [1, 1, 1, 1, 5],
    );
    assert.deepEqual(steps[0]!.together[0]!.command, { type: 'LeaveRoom', user_id: 'u1' });
    assert.deepEqual(steps[1]!.together[0]!.command, { type: 'JoinRoom', user_id: 'u1' });
    assert.deepEqual(steps[2]!.together[0]!.command, {
      type: 'MicUp',
      user_id: 'u2',
      seat_index: 1,
    });
    assert.deepEqual(steps[3]!.together[0]!.command, { type: 'MicDown', user_id: 'u2' });
    assert.equal(
      steps[4]!.together.filter((c) => c.command.type === 'RoomHeartbeat').length,
      w.users + 1,
    );
    assert.deepEqual(steps[4]!.together.at(-1)!.command, {
      type: 'RoomHeartbeat',
      user_id: GHOST,
    });
    assert.equal(steps.flatMap((s) => s.together).length, roundSize(w));
  });

  it('sends exactly the commands asked for, each with a request id of its own', () => {
    for (const n of [1, 17, 1_000, 2_345]) {
      const commands = commandsOf(n);
      assert.equal(commands.length, n);
      assert.equal(new Set(commands.map((c) => c.requestId)).size, n);
    }
    assert.equal(commandsOf(1)[0]!.command.type, 'CreateRoom');
  });

  it('is mostly heartbeats, as a live room is', () => {
    const commands = commandsOf(10_000);
    const heartbeats = commands.filter((c) => c.command.type === 'RoomHeartbeat').length;
    assert.ok(heartbeats / commands.length > 0.75, `${heartbeats} of ${commands.length}`);
  });
});
