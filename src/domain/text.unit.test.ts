import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasControlCharacters, hasDisguisingCharacters, hasLoneSurrogate } from './text.js';

describe('display text checks', () => {
  it('control characters: C0, DEL and C1, anywhere', () => {
    for (const bad of ['a\nb', '\u0000', 'tab\there', 'x\u007f', 'x\u0085', '\u009f']) {
      assert.ok(hasControlCharacters(bad), JSON.stringify(bad));
    }
    for (const good of ['', 'Friday night', 'Café 中文 😀', '\u00a0nbsp', 'zero\u200bwidth']) {
      assert.ok(!hasControlCharacters(good), JSON.stringify(good));
    }
  });

  it('direction overrides, embeddings, isolates and zero-width characters; joiners and marks are fine', () => {
    const bad = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]
      .concat([0x200b, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x180e, 0xfeff])
      .map((c) => `a${String.fromCodePoint(c)}b`);
    for (const text of bad) assert.ok(hasDisguisingCharacters(text), JSON.stringify(text));
    const good = [
      '',
      'Friday night',
      '👨\u200d👩\u200d👧',
      'می\u200cخواهم',
      'a\u200eb\u200fc\u061c',
    ];
    for (const text of good) assert.ok(!hasDisguisingCharacters(text), JSON.stringify(text));
  });

  it('lone surrogates, high or low, at either end or inside; pairs are fine', () => {
    for (const bad of ['\ud800', 'a\udc00', 'x\ud83d', '\ude00x', '\ud83dx\ude00', '😀\ud83d']) {
      assert.ok(hasLoneSurrogate(bad), JSON.stringify(bad));
    }
    for (const good of ['', 'plain', '😀', '\ud83d\ude00 party', '𝄞 music']) {
      assert.ok(!hasLoneSurrogate(good), JSON.stringify(good));
    }
  });
});
