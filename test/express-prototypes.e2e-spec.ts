import type { INestApplication } from '@nestjs/common';
import express from 'express';
import { IncomingMessage, ServerResponse, createServer } from 'node:http';
import request from 'supertest';
import { createAuthServer } from '../apps/auth-server/src/bootstrap.js';
import { bearer, newWorkspace, startApi } from './factories.js';

/**
 * Issue 12: Express 5 sets the prototype of every request and response to its own
 * (`app.handle`); V8 then gives each one a new hidden class, which cost most of a simple
 * request's CPU and promoted every request's objects to the old generation. Both servers
 * create their requests and responses with Express's prototypes already in place
 * (libs/net/src/express-adapter.ts), so no request changes one.
 */
describe("requests and responses are born with Express's prototypes", () => {
  const original = Object.setPrototypeOf;
  let changed: string[] = [];

  beforeEach(() => {
    changed = [];
    Object.setPrototypeOf = ((target: object, prototype: object | null) => {
      if ((target instanceof IncomingMessage || target instanceof ServerResponse) && Object.getPrototypeOf(target) !== prototype) {
        changed.push(target.constructor.name);
      }
      return original(target, prototype);
    }) as typeof Object.setPrototypeOf;
  });
  afterEach(() => {
    Object.setPrototypeOf = original;
  });

  it('counts the changes a plain Express 5 app makes on each request (the check itself works)', async () => {
    const plain = express();
    plain.get('/x', (_req, res) => void res.json({ ok: true }));
    const res = await request(createServer(plain)).get('/x');
    expect(res.body).toEqual({ ok: true });
    expect(changed.sort()).toEqual(['IncomingMessage', 'ServerResponse']);
  });

  describe('records API', () => {
    let app: INestApplication;
    let http: Parameters<typeof request>[0];
    let secret: string;

    beforeAll(async () => {
      let ds;
      ({ app, ds, http } = await startApi());
      secret = (await newWorkspace(ds, 'protos')).keys.Admin;
    });
    afterAll(() => app.close());

    it('serves REST, GraphQL, errors and health without changing one', async () => {
      const answers = await Promise.all([
        request(http).get('/rest/companies').set(bearer(secret)),
        request(http).post('/graphql').set(bearer(secret)).send({ query: '{ companies { totalCount } }' }),
        request(http).post('/rest/companies').set(bearer(secret)).send({ name: 'Prototype Inc' }),
        request(http).get('/rest/companies/not-an-id').set(bearer(secret)),
        request(http).get('/rest/companies'),
        request(http).get('/health/live'),
        request(http).get('/nowhere'),
      ]);
      expect(answers.map((res) => res.status)).toEqual([200, 200, 201, 400, 401, 200, 404]);
      expect(answers[2].body.data.createCompany.name).toBe('Prototype Inc');
      expect(changed).toEqual([]);
    });
  });

  describe('auth server', () => {
    let auth: INestApplication;

    beforeAll(async () => {
      auth = await createAuthServer();
      await auth.init();
    });
    afterAll(() => auth.close());

    it('serves its metadata and pages without changing one', async () => {
      const http = auth.getHttpServer();
      const answers = await Promise.all([request(http).get('/.well-known/oauth-authorization-server'), request(http).get('/nowhere')]);
      expect(answers.map((res) => res.status)).toEqual([200, 404]);
      expect(answers[0].body.issuer).toEqual(expect.any(String));
      expect(changed).toEqual([]);
    });
  });
});
