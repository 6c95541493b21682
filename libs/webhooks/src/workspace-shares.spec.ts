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

  describe('an attempt put back over its share', () => {
    const woken: string[] = [];
    const waitFor = (shares: WorkspaceShares, name: string, workspace: string, ms = 60_000) =>
      shares.whenFree(workspace, ms, () => woken.push(name));
    beforeEach(() => woken.splice(0));

    it('is woken when a slot of its workspace is given back, oldest first, each once', () => {
      const shares = new WorkspaceShares(2);
      const give = shares.take('a')!;
      expect(shares.take('a')).toBeNull();
      waitFor(shares, 'first', 'a');
      waitFor(shares, 'second', 'a');
      give();
      expect(woken).toEqual(['first']);
      give();
      expect(woken).toEqual(['first']);
      shares.take('a')!();
      expect(woken).toEqual(['first', 'second']);
    });

    it("is not woken by another workspace's slot while that workspace stays busy, and is once it goes idle", () => {
      const shares = new WorkspaceShares(10);
      const a = Array.from({ length: 9 }, () => shares.take('a')!);
      const b = [shares.take('b')!, shares.take('b')!];
      waitFor(shares, 'a-waiting', 'a');
      b[0]();
      expect(woken).toEqual([]);
      b[1]();
      expect(woken).toEqual(['a-waiting']);
      a.forEach((give) => give());
    });

    it('is woken when its wait is over, even with no slot given back', async () => {
      const shares = new WorkspaceShares(1);
      const give = shares.take('a')!;
      waitFor(shares, 'timed', 'a', 5);
      await new Promise((r) => setTimeout(r, 30));
      expect(woken).toEqual(['timed']);
      give();
      expect(woken).toEqual(['timed']);
    });
  });
});
