/* Made by json-schema-to-typescript from /docs/asyncapi.json (npm run client:generate). */

export interface WsProtocol {
  client: {
    "room.subscribe": {
      /**
       * Default {}
       */
      data: {
        /**
         * The room's id (a meeting: its room code)
         */
        room_id: string;
        /**
         * The room's app: the token's, when given
         */
        app_code?: string;
        /**
         * event_id of the last frame the client applied
         */
        since_event_id?: string;
        /**
         * the room version of the state the client has
         */
        since_version?: number;
      };
      ack: {
        app_code: string;
        room_id: string;
        /**
         * The room event frames after the client’s, in order, as they were sent live
         */
        replay?: unknown[];
        /**
         * The replay cannot be proved whole: fetch the room state again
         */
        refetch?: true;
      };
      /**
       * The stable refusal code
       */
      reason:
        | "APP_MISMATCH"
        | "BAD_REQUEST"
        | "INTERNAL"
        | "NOT_IN_ROOM_WS"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "TOO_MANY_ROOMS";
    };
    "room.unsubscribe": {
      /**
       * Default {}
       */
      data: {
        /**
         * The room's id (a meeting: its room code)
         */
        room_id: string;
        /**
         * The room's app: the token's, when given
         */
        app_code?: string;
      };
      ack: {
        app_code: string;
        room_id: string;
      };
      /**
       * The stable refusal code
       */
      reason: "APP_MISMATCH" | "BAD_REQUEST" | "INTERNAL" | "REPLY_MISMATCH";
    };
    "meeting.room.join": {
      /**
       * Default {}
       */
      data: {
        room_code: string;
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "MEETING_ENDED"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "TOO_MANY_ROOMS"
        | "UNKNOWN_KIND";
    };
    "meeting.room.leave": {
      /**
       * Default {}
       */
      data: {
        room_code: string;
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "UNKNOWN_KIND";
    };
    "meeting.member.state.changed": {
      /**
       * Default {}
       */
      data: {
        room_code: string;
        target_user_id?: number;
        audio_enabled?: boolean;
        video_enabled?: boolean;
        hand_raised?: boolean;
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "HOST_ONLY_WS"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "MEETING_ENDED"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "SELF_UNMUTE_BLOCKED"
        | "TARGET_NOT_ACTIVE"
        | "UNKNOWN_KIND";
    };
    "meeting.transport.create": {
      /**
       * Default {}
       */
      data: {
        room_code: string;
        direction: "send" | "recv";
      };
      /**
       * For mediasoup-client’s Device.createSendTransport / createRecvTransport
       */
      ack: {
        id: string;
        iceParameters: {
          [k: string]: unknown | undefined;
        };
        iceCandidates: {
          [k: string]: unknown | undefined;
        }[];
        dtlsParameters: {
          [k: string]: unknown | undefined;
        };
        /**
         * TURN servers with time-limited credentials (empty: none configured); pass as createSendTransport / createRecvTransport’s iceServers
         */
        iceServers: {
          urls: string[];
          username: string;
          credential: string;
        }[];
      };
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_SOCKET_LIMIT"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_USER_LIMIT"
        | "MEDIA_WORKER_MISSING"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "MEETING_NOT_JOINED"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "UNKNOWN_KIND";
    };
    "meeting.transport.connect": {
      /**
       * Default {}
       */
      data: {
        room_code: string;
        transport_id: string;
        dtls_parameters: {
          [k: string]: unknown | undefined;
        };
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "UNKNOWN_KIND";
    };
    "meeting.transport.plain.create": {
      /**
       * Default {}
       */
      data: {
        room_code: string;
        direction: "send" | "recv";
      };
      /**
       * A plain RTP transport (rtcp-mux, no ICE, no DTLS): a send transport takes its sender from the first packet; a recv one sends where …transport.plain.connect names
       */
      ack: {
        id: string;
        /**
         * The media server’s loopback address
         */
        ip: string;
        /**
         * Where to send RTP (send), or whence it comes (recv)
         */
        port: number;
      };
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_PLAIN_RTP_OFF"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_SOCKET_LIMIT"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_USER_LIMIT"
        | "MEDIA_WORKER_MISSING"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "MEETING_NOT_JOINED"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "UNKNOWN_KIND";
    };
    "meeting.transport.plain.connect": {
      /**
       * Default {}
       */
      data: {
        room_code: string;
        transport_id: string;
        /**
         * Where the transport sends its RTP: a loopback address
         */
        ip: string;
        port: number;
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_PLAIN_RTP_OFF"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "MEDIA_WRONG_DIRECTION"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "UNKNOWN_KIND";
    };
    "meeting.produce.start": {
      /**
       * Default {}
       */
      data: {
        room_code: string;
        transport_id: string;
        kind: "audio" | "video";
        rtp_parameters: {
          [k: string]: unknown | undefined;
        };
        /**
         * What the track carries (default: microphone for audio, camera for video)
         */
        source?: "microphone" | "camera" | "screen" | "screen_audio";
      };
      ack: {
        producer_id: string;
      };
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_SOCKET_LIMIT"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_USER_LIMIT"
        | "MEDIA_WORKER_MISSING"
        | "MEDIA_WRONG_DIRECTION"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "SCREEN_SHARE_BUSY"
        | "SELF_UNMUTE_BLOCKED"
        | "UNKNOWN_KIND";
    };
    "meeting.consume.start": {
      /**
       * Default {}
       */
      data: {
        room_code: string;
        transport_id: string;
        producer_id: string;
        rtp_capabilities: {
          [k: string]: unknown | undefined;
        };
      };
      /**
       * For mediasoup-client’s Transport.consume (the consumer starts paused)
       */
      ack: {
        id: string;
        producerId: string;
        kind: "audio" | "video";
        rtpParameters: {
          [k: string]: unknown | undefined;
        };
      };
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_SOCKET_LIMIT"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_USER_LIMIT"
        | "MEDIA_WORKER_MISSING"
        | "MEDIA_WRONG_DIRECTION"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "UNKNOWN_KIND";
    };
    "meeting.producer.close": {
      /**
       * Default {}
       */
      data: {
        room_code: string;
        producer_id: string;
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "UNKNOWN_KIND";
    };
    "meeting.consume.resume": {
      /**
       * Default {}
       */
      data: {
        consumer_id: string;
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "UNKNOWN_KIND";
    };
    "meeting.consumer.preferences": {
      /**
       * Default {}
       */
      data: {
        consumer_id: string;
        spatial_layer?: number;
        max_width?: number;
        paused?: boolean;
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "MEETING_LOOKUP_RATE_LIMITED"
        | "MEETING_NOT_FOUND"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_MEETING"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_KIND_MISMATCH"
        | "UNKNOWN_KIND";
    };
    "voice.media.join": {
      /**
       * Default {}
       */
      data: {
        room_id: string;
      };
      ack: {
        router_id: string;
        rtp_capabilities: {
          [k: string]: unknown | undefined;
        };
        producers: {
          /**
           * A user id: the account id, a JSON integer
           */
          user_id: number;
          producer_id: string;
          kind: "audio" | "video";
        }[];
      };
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_ROOM"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_CLOSED"
        | "ROOM_KIND_MISMATCH"
        | "ROOM_NOT_ACTIVE"
        | "ROOM_NOT_FOUND"
        | "UNKNOWN_KIND"
        | "USER_BANNED"
        | "VOICE_MEDIA_NOT_JOINED";
    };
    "voice.transport.create": {
      /**
       * Default {}
       */
      data: {
        room_id: string;
        direction: "send" | "recv";
      };
      /**
       * For mediasoup-client’s Device.createSendTransport / createRecvTransport
       */
      ack: {
        id: string;
        iceParameters: {
          [k: string]: unknown | undefined;
        };
        iceCandidates: {
          [k: string]: unknown | undefined;
        }[];
        dtlsParameters: {
          [k: string]: unknown | undefined;
        };
        /**
         * TURN servers with time-limited credentials (empty: none configured); pass as createSendTransport / createRecvTransport’s iceServers
         */
        iceServers: {
          urls: string[];
          username: string;
          credential: string;
        }[];
      };
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_SOCKET_LIMIT"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_USER_LIMIT"
        | "MEDIA_WORKER_MISSING"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_ROOM"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_CLOSED"
        | "ROOM_KIND_MISMATCH"
        | "ROOM_NOT_ACTIVE"
        | "ROOM_NOT_FOUND"
        | "UNKNOWN_KIND"
        | "USER_BANNED"
        | "VOICE_MEDIA_NOT_JOINED";
    };
    "voice.transport.connect": {
      /**
       * Default {}
       */
      data: {
        room_id: string;
        transport_id: string;
        dtls_parameters: {
          [k: string]: unknown | undefined;
        };
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_ROOM"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_CLOSED"
        | "ROOM_KIND_MISMATCH"
        | "ROOM_NOT_ACTIVE"
        | "ROOM_NOT_FOUND"
        | "UNKNOWN_KIND"
        | "USER_BANNED";
    };
    "voice.transport.plain.create": {
      /**
       * Default {}
       */
      data: {
        room_id: string;
        direction: "send" | "recv";
      };
      /**
       * A plain RTP transport (rtcp-mux, no ICE, no DTLS): a send transport takes its sender from the first packet; a recv one sends where …transport.plain.connect names
       */
      ack: {
        id: string;
        /**
         * The media server’s loopback address
         */
        ip: string;
        /**
         * Where to send RTP (send), or whence it comes (recv)
         */
        port: number;
      };
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_PLAIN_RTP_OFF"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_SOCKET_LIMIT"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_USER_LIMIT"
        | "MEDIA_WORKER_MISSING"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_ROOM"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_CLOSED"
        | "ROOM_KIND_MISMATCH"
        | "ROOM_NOT_ACTIVE"
        | "ROOM_NOT_FOUND"
        | "UNKNOWN_KIND"
        | "USER_BANNED"
        | "VOICE_MEDIA_NOT_JOINED";
    };
    "voice.transport.plain.connect": {
      /**
       * Default {}
       */
      data: {
        room_id: string;
        transport_id: string;
        /**
         * Where the transport sends its RTP: a loopback address
         */
        ip: string;
        port: number;
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_PLAIN_RTP_OFF"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "MEDIA_WRONG_DIRECTION"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_ROOM"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_CLOSED"
        | "ROOM_KIND_MISMATCH"
        | "ROOM_NOT_ACTIVE"
        | "ROOM_NOT_FOUND"
        | "UNKNOWN_KIND"
        | "USER_BANNED";
    };
    "voice.produce.start": {
      /**
       * Default {}
       */
      data: {
        room_id: string;
        transport_id: string;
        kind: "audio" | "video";
        rtp_parameters: {
          [k: string]: unknown | undefined;
        };
        /**
         * What the track carries (default: microphone for audio, camera for video)
         */
        source?: "microphone" | "camera" | "screen" | "screen_audio";
      };
      ack: {
        producer_id: string;
      };
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_SOCKET_LIMIT"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_USER_LIMIT"
        | "MEDIA_WORKER_MISSING"
        | "MEDIA_WRONG_DIRECTION"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_ROOM"
        | "NOT_ON_SEAT"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_CLOSED"
        | "ROOM_KIND_MISMATCH"
        | "ROOM_NOT_ACTIVE"
        | "ROOM_NOT_FOUND"
        | "UNKNOWN_KIND"
        | "USER_BANNED"
        | "VOICE_AUDIO_ONLY";
    };
    "voice.consume.start": {
      /**
       * Default {}
       */
      data: {
        room_id: string;
        transport_id: string;
        producer_id: string;
        rtp_capabilities: {
          [k: string]: unknown | undefined;
        };
      };
      /**
       * For mediasoup-client’s Transport.consume (the consumer starts paused)
       */
      ack: {
        id: string;
        producerId: string;
        kind: "audio" | "video";
        rtpParameters: {
          [k: string]: unknown | undefined;
        };
      };
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_SOCKET_LIMIT"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_USER_LIMIT"
        | "MEDIA_WORKER_MISSING"
        | "MEDIA_WRONG_DIRECTION"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_ROOM"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_CLOSED"
        | "ROOM_KIND_MISMATCH"
        | "ROOM_NOT_ACTIVE"
        | "ROOM_NOT_FOUND"
        | "UNKNOWN_KIND"
        | "USER_BANNED";
    };
    "voice.producer.close": {
      /**
       * Default {}
       */
      data: {
        room_id: string;
        producer_id: string;
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_ROOM"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_CLOSED"
        | "ROOM_KIND_MISMATCH"
        | "ROOM_NOT_ACTIVE"
        | "ROOM_NOT_FOUND"
        | "UNKNOWN_KIND"
        | "USER_BANNED";
    };
    "voice.consume.resume": {
      /**
       * Default {}
       */
      data: {
        consumer_id: string;
      };
      ack: {};
      /**
       * The stable refusal code
       */
      reason:
        | "BAD_REQUEST"
        | "BUSY"
        | "CELL_FENCED"
        | "COMMIT_FAILED"
        | "DATABASE_LOCK_CONFLICT"
        | "DATABASE_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "DECIDE_FAILED"
        | "INTERNAL"
        | "INVALID_ARGUMENT"
        | "KEY_VALUE_UNAVAILABLE"
        | "LOG_GAP"
        | "MEDIA_NO_WORKER"
        | "MEDIA_ORCHESTRATOR_ERROR"
        | "MEDIA_RESOURCE_NOT_FOUND"
        | "MEDIA_SERVER_ERROR"
        | "MEDIA_STATE_UNAVAILABLE"
        | "MEDIA_WORKER_MISSING"
        | "NODE_BUSY"
        | "NODE_DRAINING"
        | "NOT_IN_ROOM"
        | "NOT_OWNER_NODE"
        | "OWNER_TIMEOUT"
        | "OWNER_UNREACHABLE"
        | "RATE_LIMIT_UNAVAILABLE"
        | "REALTIME_UNAVAILABLE"
        | "REPLY_MISMATCH"
        | "ROOM_CLOSED"
        | "ROOM_KIND_MISMATCH"
        | "ROOM_NOT_ACTIVE"
        | "ROOM_NOT_FOUND"
        | "UNKNOWN_KIND"
        | "USER_BANNED";
    };
  };
  server: {
    "meeting.member.joined": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      participant: Participant;
    };
    "meeting.member.left":
      | {
          app_code: string;
          room_id: string;
          room_version: number;
          /**
           * null: unknown (the room just moved)
           */
          prev_room_version: number | null;
          event_id: string;
          /**
           * null: unknown (the room just moved)
           */
          prev_event_id: string | null;
          /**
           * XXX-XXX-XXX
           */
          room_code: string;
          user_id: number | null;
          reason: "leave" | "kicked" | "host_end" | "system_error";
        }
      | {
          room_code: string;
          /**
           * A user id: the account id, a JSON integer
           */
          user_id: number;
          reason: "ws_leave";
        };
    "meeting.host.changed": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      old_host_id: number | null;
      new_host_id: number | null;
      /**
       * absent: the host transferred it
       */
      auto_reason?: "host_left_with_members" | "host_grace_expired" | "empty_room_revived";
    };
    "meeting.room.ended": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      reason: "host_ended" | "empty_ttl" | "system_error";
    };
    "meeting.member.state.changed": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      user_id: number | null;
      audio_enabled?: boolean;
      video_enabled?: boolean;
      hand_raised?: boolean;
      /**
       * Beyond the seed: the member started (true) or stopped sharing a screen
       */
      screen_sharing?: boolean;
      actor_id: number | null;
    };
    "meeting.chat": {
      app_code: string;
      room_id: number | null;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      id: number;
      user_id: number;
      content: string;
      /**
       * YYYY-MM-DD HH:mm:ss, server local time
       */
      created_at: string | null;
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
    };
    "meeting.room.locked": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      /**
       * true: nobody new may join
       */
      locked: boolean;
      actor_id: number | null;
    };
    "meeting.room.self_unmute": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      /**
       * false: members may not unmute themselves (after a mute-all)
       */
      allowed: boolean;
      actor_id: number | null;
    };
    "meeting.recording.started": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      recording_id: string;
      actor_id: number | null;
    };
    "meeting.recording.stopped": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      recording_id: string;
      reason: "stopped" | "meeting_ended";
    };
    "meeting.room.waiting_room": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      /**
       * true: joins wait for the host to admit them
       */
      enabled: boolean;
      actor_id: number | null;
    };
    "meeting.member.kicked": {
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      reason: "kicked";
    };
    "meeting.waiting.joined": {
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      user_id: number | null;
    };
    "meeting.waiting.left": {
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      user_id: number | null;
      reason: "denied" | "expired" | "left" | "meeting_ended";
    };
    "meeting.waiting.admitted": {
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      user_id: number | null;
    };
    "meeting.member.producer.new": {
      room_code: string;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      producer_id: string;
      kind: "audio" | "video";
      /**
       * true: the producer closed; drop its consumers
       */
      closed: boolean;
      /**
       * Beyond the seed: what the track carries (a shared screen: screen, screen_audio); always on an opened producer, possibly absent on a closed one
       */
      source?: "microphone" | "camera" | "screen" | "screen_audio";
    };
    "meeting.active_speaker": {
      /**
       * XXX-XXX-XXX
       */
      room_code: string;
      /**
       * Whose microphone the media server hears loudest now
       */
      user_id: number;
    };
    "meeting.media.reset": {
      /**
       * The media server the room’s router is on now
       */
      media_server: string;
      /**
       * null: the router could not be made yet
       */
      router_id: string | null;
      /**
       * The new router’s RTP capabilities, for a new Device
       */
      rtp_capabilities: {
        [k: string]: unknown | undefined;
      } | null;
      room_code: string;
    };
    "voice.room.closed": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      operator_user_id: number;
      /**
       * Server clock, epoch ms
       */
      at_ms: number;
    };
    "voice.room.updated": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      operator_user_id: number;
      title?: string;
      /**
       * '' cleared it
       */
      announcement?: string;
      seat_mode?: "free" | "apply";
    };
    "voice.seat.applied": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      /**
       * The seat asked for; null: any
       */
      seat_index: number | null;
      /**
       * Server clock, epoch ms
       */
      at_ms: number;
      /**
       * Server clock
       */
      expires_at_ms: number;
    };
    "voice.seat.application.ended": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      reason:
        | "approved"
        | "rejected"
        | "cancelled"
        | "expired"
        | "left"
        | "stale"
        | "kicked"
        | "seated"
        | "seat_mode_changed"
        | "room_closed";
      /**
       * Who approved or rejected it
       */
      operator_user_id?: number;
    };
    "voice.seat.invited": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      /**
       * The seat offered; null: any idle one
       */
      seat_index: number | null;
      /**
       * A user id: the account id, a JSON integer
       */
      operator_user_id: number;
      /**
       * Server clock, epoch ms
       */
      at_ms: number;
      /**
       * Server clock
       */
      expires_at_ms: number;
    };
    "voice.seat.count.changed": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      seat_count: number;
      /**
       * A user id: the account id, a JSON integer
       */
      operator_user_id: number;
    };
    "voice.mic.muted": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      muted: boolean;
    };
    "voice.seat.muted": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      seat_index: number;
      muted: boolean;
      /**
       * A user id: the account id, a JSON integer
       */
      operator_user_id: number;
      /**
       * Unmuting a pending seat: its new deadline
       */
      publish_deadline_ms?: number;
    };
    "voice.seat.invitation.ended": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      reason: "accepted" | "declined" | "expired" | "left" | "stale" | "kicked" | "seated" | "room_closed";
    };
    "voice.member.joined": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      /**
       * Server clock, epoch ms
       */
      at_ms: number;
    };
    "voice.member.left": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      /**
       * Server clock, epoch ms
       */
      at_ms: number;
      reason: "leave" | "stale";
    };
    "voice.member.kicked": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      /**
       * A user id: the account id, a JSON integer
       */
      operator_user_id: number;
    };
    "voice.member.unbanned": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      /**
       * A user id: the account id, a JSON integer
       */
      operator_user_id: number;
    };
    "voice.admin.changed": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      is_admin: boolean;
    };
    "voice.seat.locked": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      seat_index: number;
      locked: boolean;
    };
    "voice.mic.up": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      seat_index: number;
      mic_session_id: string;
      mic_session_room_version: number;
      publish_deadline_ms: number;
      /**
       * Server clock, epoch ms
       */
      at_ms: number;
    };
    "voice.mic.changed": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      from_seat_index: number;
      seat_index: number;
      mic_session_id: string;
      publish_deadline_ms: number;
      /**
       * Who moved the user (MoveToSeat)
       */
      operator_user_id?: number;
    };
    "voice.mic.publishing":
      | {
          app_code: string;
          room_id: string;
          room_version: number;
          /**
           * null: unknown (the room just moved)
           */
          prev_room_version: number | null;
          event_id: string;
          /**
           * null: unknown (the room just moved)
           */
          prev_event_id: string | null;
          /**
           * A user id: the account id, a JSON integer
           */
          user_id: number;
          seat_index: number;
          mic_session_id: string;
          source: "rtc";
          /**
           * The RTC provider’s clock
           */
          event_time_ms: number;
        }
      | {
          app_code: string;
          room_id: string;
          room_version: number;
          /**
           * null: unknown (the room just moved)
           */
          prev_room_version: number | null;
          event_id: string;
          /**
           * null: unknown (the room just moved)
           */
          prev_event_id: string | null;
          /**
           * A user id: the account id, a JSON integer
           */
          user_id: number;
          seat_index: number;
          mic_session_id: string;
          source: "client";
          /**
           * Server clock, epoch ms
           */
          at_ms: number;
          /**
           * Older logs only
           */
          event_time_ms?: number;
        };
    "voice.mic.released": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      seat_index: number;
      mic_session_id: string;
      reason:
        | "mic_down"
        | "forced_down"
        | "leave"
        | "kicked"
        | "seat_locked"
        | "stale"
        | "publish_timeout"
        | "audio_stopped"
        | "room_exited"
        | "room_closed";
      /**
       * The RTC provider’s clock
       */
      event_time_ms?: number;
    };
    "voice.gift.sent": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      sender_user_id: number;
      /**
       * Items: A user id: the account id, a JSON integer
       */
      receiver_user_ids: number[];
      gift_id: string;
      count: number;
      unit_price: number;
      total_price: number;
    };
    "voice.chat.message": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * 1, 2, 3… in the room (the history cursor)
       */
      message_id: number;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      /**
       * The sender's nickname
       */
      user_name: string;
      content: string;
      /**
       * Server clock, epoch ms
       */
      at_ms: number;
    };
    "voice.chat.muted": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      /**
       * A user id: the account id, a JSON integer
       */
      operator_user_id: number;
      /**
       * Server clock: the mute ends then; null: lifted
       */
      muted_until_ms: number | null;
      /**
       * Server clock, epoch ms
       */
      at_ms: number;
    };
    "voice.chat.deleted": {
      app_code: string;
      room_id: string;
      room_version: number;
      /**
       * null: unknown (the room just moved)
       */
      prev_room_version: number | null;
      event_id: string;
      /**
       * null: unknown (the room just moved)
       */
      prev_event_id: string | null;
      message_id: number;
      /**
       * A user id: the account id, a JSON integer
       */
      operator_user_id: number;
    };
    "voice.kicked": {
      room_id: string;
      /**
       * A user id: the account id, a JSON integer
       */
      operator_user_id: number;
    };
    "voice.left": {
      room_id: string;
      reason: "leave" | "stale";
    };
    "voice.producer.new": {
      room_id: string;
      /**
       * A user id: the account id, a JSON integer
       */
      user_id: number;
      producer_id: string;
      kind: "audio" | "video";
      /**
       * true: the producer closed; drop its consumers
       */
      closed: boolean;
    };
    "voice.speakers": {
      room_id: string;
      speakers: {
        /**
         * A user id: the account id, a JSON integer
         */
        user_id: number;
        seat_index: number;
        /**
         * dBov
         */
        volume: number;
      }[];
    };
    "voice.ranking.changed": {
      room_id: string;
      /**
       * The day counted: YYYY-MM-DD
       */
      day: string;
      /**
       * Gift value sent, the top 10
       */
      contribution: {
        /**
         * Today (the rankings’ time zone)
         */
        day: {
          rank: number;
          /**
           * A user id: the account id, a JSON integer
           */
          user_id: number;
          user_name: string;
          total: number;
        }[];
        /**
         * All time
         */
        all: {
          rank: number;
          /**
           * A user id: the account id, a JSON integer
           */
          user_id: number;
          user_name: string;
          total: number;
        }[];
      };
      /**
       * Gift value received, the top 10
       */
      charm: {
        /**
         * Today (the rankings’ time zone)
         */
        day: {
          rank: number;
          /**
           * A user id: the account id, a JSON integer
           */
          user_id: number;
          user_name: string;
          total: number;
        }[];
        /**
         * All time
         */
        all: {
          rank: number;
          /**
           * A user id: the account id, a JSON integer
           */
          user_id: number;
          user_name: string;
          total: number;
        }[];
      };
    };
    "voice.audience": {
      room_id: string;
      online_count: number;
    };
    "voice.media.reset": {
      /**
       * The media server the room’s router is on now
       */
      media_server: string;
      /**
       * null: the router could not be made yet
       */
      router_id: string | null;
      /**
       * The new router’s RTP capabilities, for a new Device
       */
      rtp_capabilities: {
        [k: string]: unknown | undefined;
      } | null;
      room_id: string;
    };
    "notification.new": Notification;
  };
}
export interface Participant {
  id: number | null;
  room_id: number | null;
  user_id: number;
  /**
   * 1: the host
   */
  role: 0 | 1;
  role_label: "主持人" | "参会者";
  is_active: boolean;
  /**
   * YYYY-MM-DD HH:mm:ss, server local time
   */
  joined_at: string | null;
  /**
   * YYYY-MM-DD HH:mm:ss, server local time
   */
  left_at: string | null;
  /**
   * Seconds in the meeting
   */
  duration: number;
}
export interface Notification {
  id: number;
  /**
   * e.g. meeting_invite
   */
  type: string;
  title: string;
  content: string;
  /**
   * The type's own fields
   */
  extra: {
    [k: string]: unknown | undefined;
  };
  is_read: boolean;
  read_at: string | null;
  /**
   * YYYY-MM-DD HH:mm:ss, server local time
   */
  created_at: string;
}
