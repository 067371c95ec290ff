/**
 * The camera's simulcast layers, apart from the browser code that sends them, so that the
 * server's benches read the same figures.
 *
 * The camera (640×360) in two simulcast layers, 320 and 640 pixels wide (the server's
 * ladder: src/edge/room-media/layers.ts); a viewer gets the one its tile needs. Two, not
 * three: Chromium sends at most two layers of a camera this size and drops the top ones
 * (a third, 160-pixel layer would leave the 640 one unsent).
 */
export const CAMERA_SIMULCAST = [
  { scaleResolutionDownBy: 2, maxBitrate: 300_000 },
  { scaleResolutionDownBy: 1, maxBitrate: 900_000 },
];
