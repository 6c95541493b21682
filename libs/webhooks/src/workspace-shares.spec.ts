import { WorkspaceShares } from './workspace-shares.js';

describe('WorkspaceShares', () => {
  const takeAll = (shares: WorkspaceShares, workspace: string, n: number) => Array.from({ length: n }, () => shares.take(workspace));

  it('a workspace alone gets every slot but one; the one left lets another workspace start', () => {
    const shares = new WorkspaceShares(10);
    const a = takeAll(shares, 'a', 10);
    expect(a.filter(Boolean)).toHaveLength(9);
    expect(a[9]).toBeNull();
    expect(shares.take('b')).not.toBeNull();
  });

  it('with several workspaces busy each gets an even share, and a slot given back is free again once', () => {
    const shares = new WorkspaceShares(10);
    const b = shares.take('b')!;
    // a and b busy: (10 − 1) / 2 = 4 each
    expect(takeAll(shares, 'a', 5).filter(Boolean)).toHaveLength(4);
    expect(takeAll(shares, 'b', 4).filter(Boolean)).toHaveLength(3);
    b();
    b();
    expect(shares.take('b')).not.toBeNull();
    expect(shares.take('b')).toBeNull();
  });

  it('one slot: one attempt at a time, whoever asks', () => {
    const shares = new WorkspaceShares(1);
    const give = shares.take('a')!;
    expect(shares.take('a')).toBeNull();
    give();
    expect(shares.take('b')).not.toBeNull();
  });
});
