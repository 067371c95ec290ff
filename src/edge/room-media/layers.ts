/**
 * The simulcast ladder the client SDK sends a camera in (packages/client/src/media/
 * meeting-media.ts: a 640×360 camera in two encodings, 320 and 640 pixels wide) and the
 * layer a tile of a given width needs: the smallest one at least as wide, else the largest.
 * A sender with more layers (another client) is served by the same indices: its layer 0 for
 * a tile up to 320 pixels, 1 up to 640, the top one for a larger tile.
 */
export const CAMERA_LAYER_WIDTHS = [320, 640, Infinity] as const;

/** The spatial layer (0 smallest) a tile `maxWidth` device pixels wide needs. */
export function layerForWidth(maxWidth: number): number {
  const index = CAMERA_LAYER_WIDTHS.findIndex((width) => width >= maxWidth);
  return index === -1 ? CAMERA_LAYER_WIDTHS.length - 1 : index;
}
