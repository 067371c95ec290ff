/**
 * A meeting's members beyond a router's consumer budget receive on edge routers: with a
 * budget of 1 and 2 workers, the second member's receiving transport is placed on an edge on
 * the other worker; consuming the host's producer there answers that producer's id; the
 * host closing it (`meeting.producer.close`) closes the consumer on the edge too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MediaEvent } from '../../media-server/events.js';
import type { MediaServer } from '../../media-server/server.js';
import {
  mediaSkipReason,
  opusRtpParameters,
  startTestMediaServer,
  waitFor,
} from '../../media-server/testing/harness.js';
import type { Frame, TestClient } from '../../edge/ws/testing/ws-client.js';
import { mediaRoom, meetingCode, startStack, type Stack } from './testing/stack.js';

void describe('meeting members on edge routers', { skip: mediaSkipReason() }, () => {
  let server: MediaServer;
  let stack: Stack;
  const events: MediaEvent[] = [];

  before(async () => {
    server = await startTestMediaServer({ workers: 2, routerConsumers: 1 });
    server.events.subscribe((e) => events.push(e));
    stack = await startStack(server);
  });
  after(async () => {
    await stack?.close();
    await server?.close();
  });

  const ok = (ack: Frame) => {
    assert.equal(ack.code, 0, `${ack.event}: ${ack.message}`);
    return ack.data;
  };

  void it('consumes on an edge and loses the consumer there when the host closes', async () => {
    const code = meetingCode();
    stack.membership.add(code, '16', '17', '18');
    const { rtpCapabilities } = await stack.media.createRouter(mediaRoom(code));
    const join = async (userId: string) => {
      const client = await stack.connect(userId);
      ok(await client.request('meeting.room.join', { room_code: code }));
      return client;
    };
    const transport = async (client: TestClient, direction: 'send' | 'recv') =>
      ok(await client.request('meeting.transport.create', { room_code: code, direction }))
        .id as string;
    const host = await join('16');
    const producerId = ok(
      await host.request('meeting.produce.start', {
        room_code: code,
        transport_id: await transport(host, 'send'),
        kind: 'audio',
        rtp_parameters: opusRtpParameters(),
      }),
    ).producer_id as string;

    const consumers: string[] = [];
    const roles: string[] = [];
    for (const userId of ['17', '18']) {
      const member = await join(userId);
      const recv = await transport(member, 'recv');
      roles.push(server.registry.transport(recv).routerEntry.role);
      const consumed = ok(
        await member.request('meeting.consume.start', {
          room_code: code,
          transport_id: recv,
          producer_id: producerId,
          rtp_capabilities: rtpCapabilities,
        }),
      );
      assert.equal(consumed.producerId, producerId);
      consumers.push(consumed.id as string);
    }
    assert.deepEqual(roles, ['origin', 'edge']);
    const edgeRouter = server.registry.consumer(consumers[1]!).transportEntry.routerEntry;

    ok(await host.request('meeting.producer.close', { room_code: code, producer_id: producerId }));
    const closedOnEdge = await waitFor(
      () =>
        events.find(
          (e) =>
            e.type === 'consumer_closed' &&
            e.consumer_id === consumers[1] &&
            e.router_id === edgeRouter.router.id,
        ),
      'the edge consumer to close',
    );
    assert.ok(closedOnEdge.type === 'consumer_closed');
    assert.deepEqual(
      [closedOnEdge.producer_id, closedOnEdge.reason],
      [producerId, 'producer_closed'],
    );
  });
});
