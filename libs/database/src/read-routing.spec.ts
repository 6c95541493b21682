import { credentialKey, parseLsn, replicaAway } from './read-routing.js';

describe('read routing', () => {
  it('compares WAL positions across the 4 GB boundary of their halves', () => {
    expect(parseLsn('0/1B9B6B0')).toBe(0x1b9b6b0n);
    expect(parseLsn('1/0')).toBe(1n << 32n);
    expect(parseLsn('1/0') > parseLsn('0/FFFFFFFF')).toBe(true);
    expect(parseLsn('A/10') > parseLsn('9/FFFFFFF0')).toBe(true);
  });

  it('tells a replica that is away from a statement that is wrong', () => {
    // Refused, reset, dropped, timed out: no SQLSTATE.
    expect(replicaAway(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(replicaAway(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(replicaAway(new Error('timeout exceeded when trying to connect'))).toBe(true);
    // Shutting down (57P01), starting (57P03), connection failures (08006), too many connections (53300).
    for (const code of ['57P01', '57P03', '08006', '53300']) expect(replicaAway({ code })).toBe(true);
    // The statement's own fault, or its timeout: the same on the primary, so not retried there.
    for (const code of ['22P02', '42703', '57014']) expect(replicaAway({ code })).toBe(false);
  });

  it('keys a credential by kind and subject, as imports keep created_by', () => {
    expect(credentialKey({ workspaceId: 'w', kind: 'apiKey', subjectId: 'k1' })).toBe('apiKey:k1');
  });
});
