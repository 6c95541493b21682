import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { startHostileServer, type HostileServer } from './hostile-server.js';
import { spawnApp, type AppProcess } from './processes.js';

/**
 * A request must never be able to end a process: the auth server fetches client ID
 * metadata documents from URLs that anyone names (draft-ietf-oauth-client-id-metadata-document),
 * so each hostile answer (test/hostile-server.ts) is fetched once, many at a time, by a
 * real auth-server process. Each must be refused as `invalid_client`, and the process must
 * still be up and live afterwards.
 */
const REDIRECT = 'http://127.0.0.1:8765/callback';
const FETCH_TIMEOUT_MS = 1500;

describe('Outbound fetches against a hostile server', () => {
  let hostile: HostileServer;
  let auth: AppProcess;

  beforeAll(async () => {
    hostile = await startHostileServer({
      tls: { key: readFileSync(process.env.WRS_TEST_TLS_KEY!), cert: readFileSync(process.env.WRS_TEST_TLS_CERT!) },
    });
    auth = await spawnApp('auth-server', { CIMD_ALLOW_PRIVATE: '1', CIMD_FETCH_TIMEOUT_MS: String(FETCH_TIMEOUT_MS) });
  }, 60_000);
  afterAll(async () => {
    auth?.child.kill('SIGKILL');
    await hostile?.close();
  });

  /** The authorization request of a client whose id is `clientId`: the document is fetched first. */
  async function authorize(clientId: string): Promise<{ status: number; body: string } | { error: string }> {
    const params = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'api',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    try {
      const res = await fetch(`${auth.url}/oauth/authorize?${params}`, { redirect: 'manual', signal: AbortSignal.timeout(60_000) });
      return { status: res.status, body: await res.text() };
    } catch (err) {
      return { error: String((err as Error).cause ?? err) };
    }
  }

  it('refuses every hostile document as invalid_client and stays up', async () => {
    const targets = hostile.targets();
    const answers = new Map<string, string>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < targets.length) {
          const target = targets[next++];
          const answer = await authorize(target);
          answers.set(
            target,
            'error' in answer
              ? answer.error
              : `${answer.status} ${/invalid_client/.test(answer.body) ? 'invalid_client' : answer.body.slice(0, 200)}`,
          );
        }
      }),
    );
    const unexpected = [...answers].filter(([, answer]) => answer !== '400 invalid_client');
    expect({ exitCode: auth.child.exitCode, signal: auth.child.signalCode }).toEqual({ exitCode: null, signal: null });
    expect(unexpected).toEqual([]);
    expect(answers.size).toBe(targets.length);
    expect((await fetch(`${auth.url}/health/live`)).status).toBe(200);
    // The cases did reach the hostile server (the refusals are not a check before fetching);
    // on a loaded machine a few fetches time out before their request is written.
    expect(new Set(hostile.requests).size).toBeGreaterThanOrEqual(targets.length * 0.9);
  }, 150_000);

  it('fetches a failing document URL once, and refuses it from memory for a while', async () => {
    const path = `/missing-${randomUUID()}`;
    for (let i = 0; i < 3; i++) {
      const answer = await authorize(`${hostile.origin}${path}`);
      expect(answer).toMatchObject({ status: 400 });
      expect((answer as { body: string }).body).toMatch(/invalid_client/);
    }
    expect(hostile.requests.filter((p) => p === path)).toHaveLength(1);
    expect((await fetch(`${auth.url}/health/live`)).status).toBe(200);
  });
});
