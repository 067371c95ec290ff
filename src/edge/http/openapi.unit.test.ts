/**
 * Named schemas become components: one per name, referenced wherever they appear, and two
 * different schemas under one name stop the document from being built.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hoistTitled } from './openapi.js';

const room = { title: 'Room', type: 'object', properties: { id: { type: 'integer' } } };

describe('hoistTitled', () => {
  it('moves each titled object to components.schemas and references it, nested ones too', () => {
    const page = {
      title: 'Page',
      type: 'object',
      properties: { list: { type: 'array', items: room } },
    };
    const document = {
      paths: { '/a': { get: { schema: page } }, '/b': { get: { schema: room } } },
      components: { securitySchemes: { bearer: {} } },
    };
    hoistTitled(document);
    assert.deepEqual(document.paths, {
      '/a': { get: { schema: { $ref: '#/components/schemas/Page' } } },
      '/b': { get: { schema: { $ref: '#/components/schemas/Room' } } },
    });
    assert.deepEqual(document.components, {
      securitySchemes: { bearer: {} },
      schemas: {
        Room: room,
        Page: {
          ...page,
          properties: { list: { type: 'array', items: { $ref: '#/components/schemas/Room' } } },
        },
      },
    });
  });

  it('refuses two different schemas under one name', () => {
    const other = { ...room, properties: { id: { type: 'string' } } };
    const document = { paths: { '/a': { get: room }, '/b': { get: other } } };
    assert.throws(() => hoistTitled(document), /two different schemas are named Room/);
  });

  it('leaves a document without titles as it was', () => {
    const document = { paths: { '/a': { get: { type: 'object' } } } };
    hoistTitled(document);
    assert.deepEqual(document, { paths: { '/a': { get: { type: 'object' } } } });
  });
});
