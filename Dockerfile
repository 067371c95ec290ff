# EchoChat Rooms: one node (rooms, meetings with the embedded media server, the web page).
# docs/deploy.md: building, running, the variables, the ports, compose.
#
#   docker build -t echochat-rooms .
#   docker run --network host -v rooms-data:/data echochat-rooms
ARG NODE_IMAGE=node:20-bookworm-slim

# mediasoup's version, alone: the worker's layer below is keyed on it, not on the lockfile.
FROM ${NODE_IMAGE} AS mediasoup-version
WORKDIR /v
COPY package-lock.json ./
RUN node -p "require('./package-lock.json').packages['node_modules/mediasoup'].version" > version

# What native code builds with where no prebuilt binary can be fetched: the worker and the
# native modules.
FROM ${NODE_IMAGE} AS toolchain
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
  && apt-get install -y --no-install-recommends ca-certificates python3 make g++ \
  && rm -rf /var/lib/apt/lists/*

# mediasoup's C++ worker, built offline against Debian's libraries (minutes): rebuilt only
# when mediasoup's version or the build script changes, never for another dependency.
FROM toolchain AS worker
WORKDIR /worker
COPY --from=mediasoup-version /v/version ./
COPY scripts/build-mediasoup-worker.sh scripts/
RUN MEDIASOUP_VERSION="$(cat version)" MEDIASOUP_WORKER_CACHE=/worker/cache \
    bash scripts/build-mediasoup-worker.sh \
  && rm -rf /var/lib/apt/lists/*

FROM toolchain AS build
WORKDIR /app
# The worker from its stage, where the install finds it (its cache); then the dependencies,
# in a layer of their own: rebuilt when package.json, the lockfile or the install scripts change.
ENV MEDIASOUP_WORKER_CACHE=/app/.cache/mediasoup-worker
COPY --from=worker /worker/cache /app/.cache/mediasoup-worker
COPY package.json package-lock.json ./
COPY scripts/install-media.mjs scripts/build-mediasoup-worker.sh scripts/
RUN npm ci --ignore-scripts \
  && npm rebuild better-sqlite3 esbuild \
  && node scripts/install-media.mjs
COPY . .
RUN node scripts/build-web.mjs --install && test -f web/dist/index.html

FROM ${NODE_IMAGE}
ENV DEBIAN_FRONTEND=noninteractive
# The worker's libraries (when it was built against Debian's) and FFmpeg for recordings.
RUN apt-get update \
  && apt-get install -y --no-install-recommends ca-certificates ffmpeg libuv1 libssl3 \
    libsrtp2-1 libusrsctp2 libabsl20220623 libnss3 \
  && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /data/recordings && chown -R node:node /data
WORKDIR /app
COPY --from=build --chown=node:node /app /app
USER node
ENV MEDIASOUP_WORKER_CACHE=/app/.cache/mediasoup-worker \
  ROOMS_HTTP_HOST=0.0.0.0 \
  ROOMS_DB_URL=/data/rooms.sqlite \
  ROOMS_MEDIA_RECORDINGS_DIR=/data/recordings
VOLUME ["/data"]
# HTTP and /ws; gRPC between nodes; the media server's WebRTC ports (UDP and TCP).
EXPOSE 8080 9090 40000-49999/udp 40000-49999/tcp
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.ROOMS_HTTP_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# What `npm start` runs, without npm in between: npm does not pass SIGTERM on to the node,
# which must get it to drain (`docker stop`).
STOPSIGNAL SIGTERM
CMD ["node", "--import", "tsx", "src/main/server.ts"]
